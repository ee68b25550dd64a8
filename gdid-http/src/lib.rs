//! GDID authorities as network services, as the NFX/Agni authority hosts are: the `/v1` HTTP API
//! ([`wire`]), the server behind `gdid serve` ([`server`], feature `server`), and
//! [`RemoteAuthority`](client::RemoteAuthority), an [`Authority`](gdid_engine::Authority)
//! that a `BlockGenerator` uses like any database authority (feature `client`, on by default).
//!
//! | route | token | what |
//! |---|---|---|
//! | `GET /v1/health` | no | the process answers |
//! | `GET /v1/ready` | any | the store answers (503 when not) |
//! | `GET /v1/authority` | any | `{authority, max_block, max_count, version}` |
//! | `POST /v1/blocks` | the scope's | `{scope, sequence, size, vicinity?}` → `{era, authority, start, len, lease?}`, persisted before the reply |
//! | `POST /v1/blocks/give-back` | `SCOPE:give-back` | `{scope, sequence, lease, era, authority, start, len}` → `{returned}`: the unused end of a block |
//! | `POST /v1/ids` | the scope's | `{scope, sequence, count, form?}` → `{form, ids}` from the server's own generator |
//! | `GET /v1/metrics` | `SCOPE:metrics` | Prometheus text, the token's scopes only |
//! | `GET /v1/openapi.json` | no | this API as an OpenAPI 3.1 document |
//!
//! Every error is JSON, `{"error": {"code", "message"}}` ([`wire::ErrorReply`]).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs, missing_debug_implementations)]

pub mod wire;

#[cfg(feature = "client")]
pub mod client;
#[cfg(any(feature = "client", feature = "server"))]
mod pem;

#[cfg(feature = "server")]
pub mod server;
