//! The `/v1` routes. Each checks, in this order and before anything is allocated: the bearer
//! token (401; 429 when the client's host sent too many tokens the server does not accept,
//! [`super::failures`]), the token's rate (429), the body (its size 413, its time 408, its JSON
//! and fields 400), the token's scope (403), the server's limits (400), the sequences the token
//! has used ([`super::sequences`], 403), and for `/v1/ids` the memory its reply will hold (503
//! `busy`). One deadline, the request timeout from the moment the request is routed, bounds the
//! body and the store's answer together.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Extension, Json, Router};
use serde_json::json;
use tokio::time::Instant;

use super::ids_body::ids_reply;
use super::listen::Peer;
use super::memory::ConnectionMemory;
use super::tokens::Digest;
use super::{ApiError, Grant, Scopes, Shared};
use crate::wire::{
    self, AllocateRequest, AuthorityInfo, BlockReply, GiveBackReply, GiveBackRequest, IdsReply,
    IdsRequest,
};

/// The state every handler reads.
type AppState = State<Arc<Shared>>;

/// Every route, for the replies that list them.
const ROUTES: &str = "GET /v1/health, /v1/ready, /v1/authority, /v1/metrics, /v1/openapi.json; \
                      POST /v1/blocks, /v1/blocks/give-back, /v1/ids";

/// This API as an OpenAPI 3.1 document, served as committed (`tests/test_openapi.rs` checks it
/// against the routes and their replies).
const OPENAPI_DOCUMENT: &str = include_str!("../../openapi.json");

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route(wire::HEALTH, get(health))
        .route(wire::READY, get(ready))
        .route(wire::AUTHORITY, get(authority))
        .route(wire::BLOCKS, post(blocks))
        .route(wire::GIVE_BACK, post(give_back))
        .route(wire::IDS, post(ids))
        .route(wire::METRICS, get(metrics))
        .route(wire::OPENAPI, get(openapi))
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .with_state(shared)
}

async fn health() -> Json<serde_json::Value> {
    Json(json!({ "status": "ok" }))
}

async fn openapi() -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        OPENAPI_DOCUMENT,
    )
        .into_response()
}

async fn ready(
    State(shared): AppState,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let deadline = shared.deadline();
    caller(&shared, &headers, peer)?;
    if let Some(check) = &shared.ready {
        let failure = match tokio::time::timeout_at(deadline, check()).await {
            Ok(Ok(())) => None,
            Ok(Err(error)) => Some(error),
            Err(_) => Some(format!("no answer within {:?}", shared.request_timeout)),
        };
        if let Some(error) = failure {
            tracing::warn!(%error, "readiness check failed");
            return Err(ApiError::unavailable("the authority's store is not ready"));
        }
    }
    Ok(Json(json!({ "status": "ready", "authority": shared.authority.number() })).into_response())
}

async fn authority(
    State(shared): AppState,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
) -> Result<Json<AuthorityInfo>, ApiError> {
    caller(&shared, &headers, peer)?;
    Ok(Json(AuthorityInfo {
        authority: shared.authority.number(),
        max_block: shared.max_block,
        max_count: shared.max_count,
        version: env!("CARGO_PKG_VERSION").to_owned(),
    }))
}

async fn blocks(
    State(shared): AppState,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<BlockReply>, ApiError> {
    let deadline = shared.deadline();
    let (token, grant) = caller(&shared, &headers, peer)?;
    let request = AllocateRequest::decode(&read_body(&shared, body, deadline).await?)?;
    permit(&grant.scopes, &request.scope)?;
    within_limit(&shared, Asked::Block(request.size))?;
    shared
        .sequences
        .admit(&token, &request.scope, &request.sequence)?;
    let allocation =
        shared
            .authority
            .allocate_boxed(&request.scope, &request.sequence, request.size);
    let block = within(&shared, deadline, allocation)
        .await?
        .map_err(|error| ApiError::from_authority("allocating a block", &error))?;
    let lease = if grant.give_back.allows(&request.scope) {
        shared
            .leases
            .grant(&request.scope, &request.sequence, block, token)
    } else {
        None
    };
    Ok(Json(BlockReply {
        lease,
        ..BlockReply::from(block)
    }))
}

async fn give_back(
    State(shared): AppState,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Json<GiveBackReply>, ApiError> {
    let deadline = shared.deadline();
    let (token, grant) = caller(&shared, &headers, peer)?;
    let (request, tail) = GiveBackRequest::decode(&read_body(&shared, body, deadline).await?)?;
    permit(&grant.scopes, &request.scope)?;
    if !grant.give_back.allows(&request.scope) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "give_back_not_allowed",
            format!(
                "the bearer token may not give ids back in scope {:?} (tokens file: \
                 `SCOPE:give-back`): unused ids are lost, never issued twice",
                request.scope
            ),
        ));
    }
    if !shared.leases.redeem(
        &request.scope,
        &request.sequence,
        &request.lease,
        &tail,
        token,
    ) {
        return Ok(Json(GiveBackReply { returned: false }));
    }
    let given = shared
        .authority
        .give_back_boxed(&request.scope, &request.sequence, tail);
    let returned = within(&shared, deadline, given)
        .await?
        .map_err(|error| ApiError::from_authority("giving ids back", &error))?;
    Ok(Json(GiveBackReply { returned }))
}

async fn ids(
    State(shared): AppState,
    connection: Option<Extension<ConnectionMemory>>,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
    body: Body,
) -> Result<Response, ApiError> {
    let deadline = shared.deadline();
    let (token, grant) = caller(&shared, &headers, peer)?;
    let request = IdsRequest::decode(&read_body(&shared, body, deadline).await?)?;
    permit(&grant.scopes, &request.scope)?;
    within_limit(&shared, Asked::Ids(request.count))?;
    shared
        .sequences
        .admit(&token, &request.scope, &request.sequence)?;
    // The reply's memory first: no id is issued that could not be sent.
    let size = IdsReply::size(request.form, request.count);
    let connection = connection.as_ref().map(|Extension(memory)| memory);
    let held = shared.reply_memory.hold(connection, size)?;
    let issued = shared
        .direct
        .ids(&request.scope, &request.sequence, request.count);
    let batch = within(&shared, deadline, issued).await??;
    ids_reply(request.form, &batch, held)
}

async fn metrics(
    State(shared): AppState,
    peer: Option<Extension<Peer>>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let (_, grant) = caller(&shared, &headers, peer)?;
    if grant.metrics == Scopes::Only(Vec::new()) {
        return Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            "the bearer token may not read metrics (tokens file: `SCOPE:metrics`)",
        ));
    }
    let Some(render) = &shared.metrics else {
        return Err(ApiError::new(
            StatusCode::NOT_FOUND,
            "not_found",
            "this server was started without metrics",
        ));
    };
    Ok((
        [(header::CONTENT_TYPE, "text/plain; version=0.0.4")],
        only_scopes(&render(), &grant.metrics),
    )
        .into_response())
}

/// The series of `text` (Prometheus' text format) of the scopes `allowed`: a series labelled
/// with another scope is left out; comments and series of no scope stay.
fn only_scopes(text: &str, allowed: &Scopes) -> String {
    if *allowed == Scopes::All {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    for line in text.lines() {
        // The `scope` label, first in `{…}` or after a comma.
        let scope = ["{scope=\"", ",scope=\""]
            .iter()
            .find_map(|label| line.split_once(label))
            .and_then(|(_, rest)| rest.split_once('"'))
            .map(|(scope, _)| scope);
        if line.starts_with('#') || scope.is_none_or(|scope| allowed.allows(scope)) {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

async fn not_found() -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "not_found",
        format!("no such route: {ROUTES}"),
    )
}

async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method_not_allowed",
        format!("wrong method: {ROUTES}"),
    )
}

/// Who sent the request: its bearer token's digest and scopes, if the token is within its rate.
///
/// A request from a `peer` ([`serve`](super::Server::serve)'s) whose host sent too many tokens
/// the server does not accept is refused before its token is read, unless its connection's last
/// token was accepted; each token refused counts against its host. A connection keeps its place
/// while its tokens are accepted: a 401, or the 429 of a token that holds its most connections
/// already ([`ConnectionLimits::max_per_token`](super::ConnectionLimits)), closes it after the
/// reply.
fn caller(
    shared: &Shared,
    headers: &HeaderMap,
    peer: Option<Extension<Peer>>,
) -> Result<(Digest, Arc<Grant>), ApiError> {
    let peer = peer.map(|Extension(peer)| peer);
    let Some(value) = headers.get(header::AUTHORIZATION) else {
        if let Some(peer) = &peer {
            peer.refused();
        }
        return Err(ApiError::unauthorized(
            "no bearer token: send `Authorization: Bearer TOKEN`",
        ));
    };
    if let Some(peer) = peer.as_ref().filter(|peer| !peer.accepted()) {
        shared.failures.check(peer.host())?;
    }
    let refused = |message: &str| {
        if let Some(peer) = &peer {
            shared.failures.record(peer.host());
            peer.refused();
        }
        ApiError::unauthorized(message)
    };
    let token = value
        .to_str()
        .ok()
        // The scheme's name is case-insensitive (RFC 7235).
        .and_then(|value| value.split_once(' '))
        .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
        .map(|(_, token)| token.trim())
        .ok_or_else(|| refused("the Authorization header is not `Bearer TOKEN`"))?;
    let (digest, grant) = shared
        .tokens()
        .caller(token)
        .ok_or_else(|| refused("the bearer token is not one this server accepts"))?;
    if let Some(peer) = &peer
        && !peer.accepted_token(&digest)
    {
        return Err(ApiError::new(
            StatusCode::TOO_MANY_REQUESTS,
            "too_many_connections",
            format!(
                "this bearer token holds {} connections already, the most one token may: send \
                 on one of them",
                shared.connections.max_per_token
            ),
        ));
    }
    shared.rates.check(&digest)?;
    Ok((digest, grant))
}

/// Whether the token's scopes hold `scope`.
fn permit(scopes: &Scopes, scope: &str) -> Result<(), ApiError> {
    if scopes.allows(scope) {
        Ok(())
    } else {
        Err(ApiError::new(
            StatusCode::FORBIDDEN,
            "forbidden",
            format!("the bearer token may not use scope {scope:?}"),
        ))
    }
}

/// What a request asks of the server's own limits (`GET /v1/authority` shows them).
enum Asked {
    /// A block of this size.
    Block(u64),
    /// This many ids.
    Ids(u64),
}

/// Whether `asked` is within the server's limits (400 beyond: `size_too_large` for a block).
fn within_limit(shared: &Shared, asked: Asked) -> Result<(), ApiError> {
    // The field asked, its value, the server's largest, what that largest is called, the code.
    let (field, value, largest, what, code) = match asked {
        Asked::Block(size) => ("size", size, shared.max_block, "block", "size_too_large"),
        Asked::Ids(count) => ("count", count, shared.max_count, "count", "bad_request"),
    };
    if value <= largest {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::BAD_REQUEST,
        code,
        format!(
            "{field}: {value} is above this server's largest {what}, {largest} (GET /v1/authority)"
        ),
    ))
}

/// The whole body, at most the server's largest, before `deadline`.
async fn read_body(
    shared: &Shared,
    body: Body,
    deadline: Instant,
) -> Result<axum::body::Bytes, ApiError> {
    let read = axum::body::to_bytes(body, shared.max_body);
    match tokio::time::timeout_at(deadline, read).await {
        Ok(Ok(bytes)) => Ok(bytes),
        Ok(Err(error)) if over_the_limit(&error) => Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "too_large",
            format!("the body is over {} bytes", shared.max_body),
        )),
        Ok(Err(_)) => Err(ApiError::new(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "the body was cut off or badly framed",
        )),
        Err(_) => Err(ApiError::new(
            StatusCode::REQUEST_TIMEOUT,
            "timeout",
            format!("the body took over {:?} to arrive", shared.request_timeout),
        )),
    }
}

/// Whether reading a body failed on its size.
fn over_the_limit(error: &axum::Error) -> bool {
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(error) = cause {
        if error.is::<http_body_util::LengthLimitError>() {
            return true;
        }
        cause = error.source();
    }
    false
}

/// `work`, or a 503 at `deadline`: what was reserved meanwhile is lost, never served twice.
async fn within<T>(
    shared: &Shared,
    deadline: Instant,
    work: impl Future<Output = T>,
) -> Result<T, ApiError> {
    tokio::time::timeout_at(deadline, work).await.map_err(|_| {
        ApiError::new(
            StatusCode::SERVICE_UNAVAILABLE,
            "timeout",
            format!(
                "the authority's store did not answer within {:?}: try again, or another \
                 authority",
                shared.request_timeout
            ),
        )
    })
}
