//! The `/v1` API on the wire: paths, the JSON of each request and reply, and the checks a request
//! passes before anything is allocated. The server and the client share these types, so the two
//! cannot disagree on a field.
//!
//! ```
//! use gdid_http::wire::AllocateRequest;
//!
//! let request = AllocateRequest::decode(br#"{"scope":"shop","sequence":"orders","size":100}"#)?;
//! assert_eq!((request.scope.as_str(), request.size), ("shop", 100));
//!
//! let error = AllocateRequest::decode(br#"{"scope":"shop","sequence":"orders"}"#).unwrap_err();
//! assert!(error.to_string().contains("missing field `size`"), "{error}");
//! # Ok::<(), gdid_http::wire::BadRequest>(())
//! ```

use std::fmt;

use gdid_core::Form;
use gdid_engine::{AuthorityError, Block, NameKind, backend::validate_name};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// `GET`: whether the process answers (no token needed).
pub const HEALTH: &str = "/v1/health";
/// `GET`: whether the store answers and still records this authority's number.
pub const READY: &str = "/v1/ready";
/// `GET`: the authority's number and the server's limits ([`AuthorityInfo`]).
pub const AUTHORITY: &str = "/v1/authority";
/// `POST` an [`AllocateRequest`]: a block of counters, persisted before the reply.
pub const BLOCKS: &str = "/v1/blocks";
/// `POST` a [`GiveBackRequest`]: the unused tail of a block handed out by `POST /v1/blocks`.
pub const GIVE_BACK: &str = "/v1/blocks/give-back";
/// `POST` an [`IdsRequest`]: ids from the server's own block generator.
pub const IDS: &str = "/v1/ids";
/// `GET`: the server's metrics, in the Prometheus text format.
pub const METRICS: &str = "/v1/metrics";
/// `GET`: this API as an OpenAPI 3.1 document (no token needed): the crate's `openapi.json`.
pub const OPENAPI: &str = "/v1/openapi.json";

/// The largest counter (2^60 − 1): `vicinity` is at most this.
pub use gdid_core::COUNTER_MAX;

/// A request that cannot be served as sent: what is wrong with it, fit to send back to the
/// client (it never holds a store's error or a secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadRequest(pub String);

/// `POST /v1/blocks`: reserve `size` consecutive counters of (`scope`, `sequence`).
///
/// `vicinity` is the NFX/Agni authority protocol's hint (`AllocateBlock(scope, sequence,
/// blockSize, vicinity)`): where on the counter scale the caller would like the block. As that
/// protocol allows, the authority may disregard it, and this one does: a block always comes from
/// the counter's current end, so honouring the hint could only skip ids, never make one unique. It
/// is checked (at most [`COUNTER_MAX`]) and otherwise ignored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AllocateRequest {
    /// The scope (a database name, say): 1 to 80 of `A-Z a-z 0-9`, with `_ . -` inside
    /// ([`validate_name`]).
    pub scope: String,
    /// The sequence within the scope (a table name, say), named by the same rule.
    pub sequence: String,
    /// How many counters: 1 to the server's maximum block.
    pub size: u64,
    /// The NFX/Agni protocol's vicinity hint, ignored (see above).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vicinity: Option<u64>,
}

impl AllocateRequest {
    /// Decodes and checks a request body: names by [`validate_name`], a size of at least 1 and
    /// a vicinity within the counter range. The server's own maximum block is checked by the
    /// server.
    ///
    /// # Errors
    ///
    /// [`BadRequest`] saying which field is wrong, or where the JSON breaks.
    pub fn decode(body: &[u8]) -> Result<AllocateRequest, BadRequest> {
        let request = decode_named(body, |r: &AllocateRequest| (&r.scope, &r.sequence))?;
        if request.size == 0 {
            return Err(BadRequest("size: a block holds at least 1 id".into()));
        }
        if let Some(vicinity) = request.vicinity {
            if vicinity > COUNTER_MAX {
                return Err(BadRequest(format!(
                    "vicinity: {vicinity} is above the largest counter {COUNTER_MAX}"
                )));
            }
        }
        Ok(request)
    }
}

/// The reply to `POST /v1/blocks`: counters `start .. start + len` of era `era`, authority
/// `authority`, already persisted by the authority's store.
///
/// A reply may gain fields in later versions of the server: unknown ones are ignored (requests,
/// which the server reads, refuse them).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockReply {
    /// The era of every id in the block.
    pub era: u32,
    /// The authority number, 0 to 15.
    pub authority: u8,
    /// The first counter.
    pub start: u64,
    /// How many counters.
    pub len: u64,
    /// What a client shows to give the block's unused tail back ([`GiveBackRequest`]): only the
    /// client the block was sent to knows it, so no other can make the server issue ids twice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lease: Option<String>,
}

impl From<Block> for BlockReply {
    fn from(block: Block) -> Self {
        BlockReply {
            era: block.era(),
            authority: block.authority(),
            start: block.start(),
            len: block.len(),
            lease: None,
        }
    }
}

impl BlockReply {
    /// The block, checked as every block is ([`Block::new`]).
    ///
    /// # Errors
    ///
    /// [`AuthorityError::InvalidBlock`] for a block that breaks a rule.
    pub fn block(&self) -> Result<Block, AuthorityError> {
        Block::new(self.era, self.authority, self.start, self.len)
    }
}

/// `POST /v1/blocks/give-back`: the unused end of the block of `lease`, to be issued later
/// instead of lost. The server takes it back only while the lease is the latest it gave for the
/// sequence and the store's counter still stands right after the block
/// (`CounterState::give_back`); either way the client must never serve those ids afterwards.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GiveBackRequest {
    /// The scope.
    pub scope: String,
    /// The sequence.
    pub sequence: String,
    /// The `lease` of the [`BlockReply`] the tail is the end of.
    pub lease: String,
    /// The tail's era.
    pub era: u32,
    /// The tail's authority.
    pub authority: u8,
    /// The tail's first counter.
    pub start: u64,
    /// How many counters it holds (to the end of its block).
    pub len: u64,
}

impl GiveBackRequest {
    /// Decodes and checks a request body: names, a lease of 32 hex digits, a valid block.
    ///
    /// # Errors
    ///
    /// [`BadRequest`] saying which field is wrong, or where the JSON breaks.
    pub fn decode(body: &[u8]) -> Result<(GiveBackRequest, Block), BadRequest> {
        let request = decode_named(body, |r: &GiveBackRequest| (&r.scope, &r.sequence))?;
        if request.lease.len() != 32 || !request.lease.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(BadRequest(
                "lease: 32 hex digits, as the block's reply gave".into(),
            ));
        }
        let tail = Block::new(request.era, request.authority, request.start, request.len)
            .map_err(|e| BadRequest(format!("the tail: {e}")))?;
        Ok((request, tail))
    }
}

/// A lease in a `Debug` form: whether there is one, never what it is.
fn hidden(lease: Option<&String>) -> Option<&'static str> {
    lease.map(|_| "…")
}

impl fmt::Debug for BlockReply {
    /// Without the lease: a secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockReply")
            .field("era", &self.era)
            .field("authority", &self.authority)
            .field("start", &self.start)
            .field("len", &self.len)
            .field("lease", &hidden(self.lease.as_ref()))
            .finish()
    }
}

impl fmt::Debug for GiveBackRequest {
    /// Without the lease: a secret.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("GiveBackRequest")
            .field("scope", &self.scope)
            .field("sequence", &self.sequence)
            .field("lease", &hidden(Some(&self.lease)))
            .field("era", &self.era)
            .field("authority", &self.authority)
            .field("start", &self.start)
            .field("len", &self.len)
            .finish()
    }
}

/// The reply to `POST /v1/blocks/give-back`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct GiveBackReply {
    /// Whether the ids went back (they will be issued again, to someone).
    pub returned: bool,
}

/// `POST /v1/ids`: `count` ids of (`scope`, `sequence`) from the server's own block generator,
/// spelled in `form`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdsRequest {
    /// The scope, named as in [`AllocateRequest`].
    pub scope: String,
    /// The sequence.
    pub sequence: String,
    /// How many ids: 1 to the server's maximum count.
    pub count: u64,
    /// How each id is spelled; `text` when left out.
    #[serde(default)]
    pub form: Form,
}

impl IdsRequest {
    /// Decodes and checks a request body (names, and a count of at least 1; the server's
    /// maximum count is checked by the server).
    ///
    /// # Errors
    ///
    /// [`BadRequest`] saying which field is wrong, or where the JSON breaks.
    pub fn decode(body: &[u8]) -> Result<IdsRequest, BadRequest> {
        let request = decode_named(body, |r: &IdsRequest| (&r.scope, &r.sequence))?;
        if request.count == 0 {
            return Err(BadRequest("count: ask for at least 1 id".into()));
        }
        Ok(request)
    }
}

/// The reply to `POST /v1/ids`: the ids in the order they were issued.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IdsReply {
    /// How they are spelled.
    pub form: Form,
    /// The ids.
    pub ids: Vec<String>,
}

impl IdsReply {
    /// The most bytes the JSON of a reply of `count` ids in `form` takes.
    ///
    /// ```
    /// use gdid_core::Form;
    /// use gdid_http::wire::IdsReply;
    ///
    /// let reply = IdsReply { form: Form::Hex, ids: vec!["f".repeat(24); 3] };
    /// assert!(serde_json::to_vec(&reply)?.len() <= IdsReply::size(Form::Hex, 3));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    pub fn size(form: Form, count: u64) -> usize {
        // `{"form":"compact","ids":[` and `]}`; each id quoted, with a comma.
        const FRAME: usize = 32;
        usize::try_from(count)
            .unwrap_or(usize::MAX)
            .saturating_mul(form.longest() + 3)
            .saturating_add(FRAME)
    }

    /// The most bytes a reply of `count` ids takes, whatever its form.
    pub fn largest_size(count: u64) -> usize {
        Form::ALL
            .into_iter()
            .map(|form| IdsReply::size(form, count))
            .max()
            .unwrap_or(0)
    }
}

/// The reply to `GET /v1/authority`: who this server is and what it accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AuthorityInfo {
    /// The authority number recorded in the server's store.
    pub authority: u8,
    /// The largest `size` of a block request.
    pub max_block: u64,
    /// The largest `count` of an ids request.
    pub max_count: u64,
    /// The server's version (`gdid-http`'s).
    pub version: String,
}

/// The body of every reply that is not a success.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorReply {
    /// What went wrong.
    pub error: ErrorBody,
}

/// What went wrong: a code a program can match on, and a message for a person.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    /// One of `bad_request`, `size_too_large`, `too_large`, `rate_limited`, `timeout`,
    /// `unauthorized`, `forbidden`, `give_back_not_allowed`, `not_found`, `method_not_allowed`,
    /// `unavailable`, `exhausted`, `corrupt`, `misconfigured`, `switched`, `busy`, `shutting_down`
    /// (the OpenAPI document, [`OPENAPI`], says which each route answers).
    pub code: String,
    /// What is wrong, in words; never a store's error text or a secret.
    pub message: String,
}

/// A JSON body, with serde's account of what is wrong (a type, a line and column) after the
/// field it is in.
fn decode_json<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, BadRequest> {
    // serde would take a struct from an array of its fields too (`["shop","orders",3]`): the API
    // is objects with named fields only.
    match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'{') => {}
        Some(_) => return Err(BadRequest("body: a JSON object is expected".into())),
        None => return Err(BadRequest("body: empty; a JSON object is expected".into())),
    }
    let mut json = serde_json::Deserializer::from_slice(body);
    let value = serde_path_to_error::deserialize(&mut json).map_err(|error| {
        let path = error.path().to_string();
        match path.as_str() {
            // "?": the error is not in a field (the body ends inside the object, say).
            "." | "?" => BadRequest(format!("body: {}", error.inner())),
            _ => BadRequest(format!("{path}: {}", error.inner())),
        }
    })?;
    json.end()
        .map_err(|error| BadRequest(format!("body: {error}")))?;
    Ok(value)
}

/// A request of the sequence its `names` give (scope, sequence): [`decode_json`], then both
/// names by the rule every store keeps.
fn decode_named<T: DeserializeOwned>(
    body: &[u8],
    names: fn(&T) -> (&str, &str),
) -> Result<T, BadRequest> {
    let request = decode_json(body)?;
    let (scope, sequence) = names(&request);
    validate_name(NameKind::Scope, scope).map_err(|e| BadRequest(e.to_string()))?;
    validate_name(NameKind::Sequence, sequence).map_err(|e| BadRequest(e.to_string()))?;
    Ok(request)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_with_every_field_decodes() {
        let request = AllocateRequest::decode(
            br#"{"scope":"shop","sequence":"orders","size":7,"vicinity":1152921504606846975}"#,
        )
        .unwrap();
        assert_eq!(request.vicinity, Some(COUNTER_MAX));
        let ids = IdsRequest::decode(br#"{"scope":"s","sequence":"q","count":3,"form":"elink"}"#)
            .unwrap();
        assert_eq!((ids.count, ids.form), (3, Form::Elink));
    }

    #[test]
    fn bad_requests_say_what_is_wrong() {
        let cases: [(&[u8], &str); 12] = [
            (b"", "empty"),
            (b"[1,2", "JSON object"),
            (br#"["shop","orders",3]"#, "JSON object"),
            (br#"{"scope":"shop""#, "body: EOF"),
            (br#"{"scope":"shop","sequence":"orders","size":0}"#, "size"),
            (
                br#"{"scope":"shop","sequence":"orders","size":-1}"#,
                "invalid value",
            ),
            (
                br#"{"scope":"shop","sequence":"orders","size":1e3}"#,
                "invalid type",
            ),
            (br#"{"scope":"","sequence":"orders","size":1}"#, "scope"),
            (br#"{"scope":"shop","sequence":"a b","size":1}"#, "sequence"),
            (
                br#"{"scope":"shop","sequence":"orders","size":1,"extra":1}"#,
                "unknown field",
            ),
            (
                br#"{"scope":"shop","sequence":"orders","size":1,"vicinity":1152921504606846976}"#,
                "vicinity",
            ),
            (
                br#"{"scope":"shop","sequence":"orders","size":18446744073709551616}"#,
                "size",
            ),
        ];
        for (body, says) in cases {
            let error = AllocateRequest::decode(body).unwrap_err();
            assert!(
                error.0.contains(says),
                "{:?}: {error} should say {says}",
                String::from_utf8_lossy(body)
            );
        }
        for (body, says) in [
            (&br#"{"scope":"s","sequence":"q","count":0}"#[..], "count"),
            (
                br#"{"scope":"s","sequence":"q","count":1,"form":"base64"}"#,
                "unknown variant",
            ),
        ] {
            let error = IdsRequest::decode(body).unwrap_err();
            assert!(error.0.contains(says), "{error} should say {says}");
        }
    }

    #[test]
    fn a_lease_never_shows_in_debug_and_replies_take_new_fields() {
        let reply: BlockReply = serde_json::from_str(
            r#"{"era":0,"authority":1,"start":1,"len":5,"lease":"0123456789abcdef0123456789abcdef","later":true}"#,
        )
        .unwrap();
        assert!(
            !format!("{reply:?}").contains("0123456789abcdef"),
            "{reply:?}"
        );
        let (request, _) = GiveBackRequest::decode(
            br#"{"scope":"s","sequence":"q","lease":"0123456789abcdef0123456789abcdef","era":0,"authority":1,"start":3,"len":3}"#,
        )
        .unwrap();
        assert!(
            !format!("{request:?}").contains("0123456789abcdef"),
            "{request:?}"
        );
    }

    #[test]
    fn a_block_reply_is_checked_as_every_block() {
        let block = Block::new(2, 3, 10, 5).unwrap();
        assert_eq!(BlockReply::from(block).block().unwrap(), block);
        for (era, authority, start, len) in [(0, 1, 0, 5), (0, 16, 1, 1), (0, 1, 1, 0)] {
            let reply = BlockReply {
                era,
                authority,
                start,
                len,
                lease: None,
            };
            assert!(reply.block().is_err(), "{reply:?}");
        }
        let past_max = BlockReply {
            era: 0,
            authority: 1,
            start: COUNTER_MAX,
            len: 2,
            lease: None,
        };
        assert!(past_max.block().is_err());
    }
}
