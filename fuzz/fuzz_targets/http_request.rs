//! The `/v1` request bodies: `AllocateRequest::decode`, `IdsRequest::decode` and
//! `GiveBackRequest::decode` (gdid-http's `wire`) on arbitrary bytes, as a client could send them.
//!
//! - never panics, and formatting the error never panics;
//! - an accepted request keeps the rules: both names pass `validate_name`, `size` and `count` are
//!   at least 1, `vicinity` is at most `COUNTER_MAX`; a give-back's lease is 32 hex digits and
//!   its tail the block `Block::new` makes of its fields;
//! - an accepted body is one JSON object (nothing after it; an array of the fields, which serde
//!   would take, is refused) holding only the struct's fields, with the values decoded; no body
//!   is accepted by two decoders (`deny_unknown_fields`, and each has a required field the others
//!   do not know);
//! - an accepted request, written back with `serde_json` (compact and pretty), decodes to the same
//!   request;
//! - a lease is a secret the error never shows: a JSON object with a `lease` field, written with
//!   one 32-digit lease then another, gives the same result either way (the same error, or the
//!   same request but for the lease), and the error holds neither lease;
//! - an error message is never empty and never longer than `6 * len + 512` bytes for a body of
//!   `len` bytes. Nothing in `wire` cuts a message, so this is what serde, serde_json and
//!   serde_path_to_error give: the path is made of known field names, or of the one unknown key
//!   that failed (shown twice: `KEY: unknown field `KEY``), a string value is echoed once with
//!   `{:?}` (at most 6 bytes per byte of body: a raw DEL becomes `\u{7f}`), an unknown variant
//!   once as it is, a float in full decimal (at most 327 bytes, `-1.2852679433818754e-308`), a bad
//!   name by `validate_name` with `{:?}` and cut at 100 characters, a bad tail by `Block::new`
//!   with its numbers, plus fixed words and a line and column.
#![no_main]

use std::fmt::Debug;

use gdid_core::{COUNTER_MAX, Form};
use gdid_engine::{Block, NameKind, backend::validate_name};
use gdid_http::wire::{AllocateRequest, BadRequest, GiveBackRequest, IdsRequest};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let block = AllocateRequest::decode(data);
    let ids = IdsRequest::decode(data);
    let give_back = GiveBackRequest::decode(data);
    let accepted = [block.is_ok(), ids.is_ok(), give_back.is_ok()];
    assert!(
        accepted.iter().filter(|&&ok| ok).count() <= 1,
        "accepted by more than one decoder ({accepted:?}): {:?}",
        String::from_utf8_lossy(data)
    );

    match block {
        Ok(request) => check_block(data, &request),
        Err(error) => check_error(data, &error),
    }
    match ids {
        Ok(request) => check_ids(data, &request),
        Err(error) => check_error(data, &error),
    }
    match give_back {
        Ok((request, tail)) => check_give_back(data, &request, tail),
        Err(error) => check_error(data, &error),
    }
    check_lease_unseen(data);
});

fn check_block(data: &[u8], request: &AllocateRequest) {
    let body = String::from_utf8_lossy(data);
    check_names(&body, &request.scope, &request.sequence);
    assert!(request.size >= 1, "size 0 accepted from {body:?}");
    if let Some(vicinity) = request.vicinity {
        assert!(
            vicinity <= COUNTER_MAX,
            "vicinity {vicinity} accepted from {body:?}"
        );
    }

    let object = object_of(data, request, &["scope", "sequence", "size"], &["vicinity"]);
    match request.vicinity {
        Some(vicinity) => assert_eq!(object["vicinity"], Value::from(vicinity), "{body:?}"),
        // Left out, or written `null` (an `Option` field takes `null` as `None`).
        None => assert!(
            object.get("vicinity").is_none_or(Value::is_null),
            "{body:?}"
        ),
    }

    check_written_back(
        &body,
        request,
        AllocateRequest::decode,
        &Ok(request.clone()),
    );
}

fn check_ids(data: &[u8], request: &IdsRequest) {
    let body = String::from_utf8_lossy(data);
    check_names(&body, &request.scope, &request.sequence);
    assert!(request.count >= 1, "count 0 accepted from {body:?}");

    let object = object_of(data, request, &["scope", "sequence", "count"], &["form"]);
    let form = request.form.name();
    match object.get("form") {
        None => assert_eq!(request.form, Form::Text, "{body:?}"),
        // serde_json also reads a unit variant written as `{"hex": null}`.
        Some(Value::Object(variant)) => {
            assert_eq!(variant.len(), 1, "{body:?}");
            assert!(variant.get(form).is_some_and(Value::is_null), "{body:?}");
        }
        Some(value) => assert_eq!(*value, Value::from(form), "{body:?}"),
    }

    check_written_back(&body, request, IdsRequest::decode, &Ok(request.clone()));
}

fn check_give_back(data: &[u8], request: &GiveBackRequest, tail: Block) {
    let body = String::from_utf8_lossy(data);
    check_names(&body, &request.scope, &request.sequence);
    assert!(
        request.lease.len() == 32 && request.lease.bytes().all(|b| b.is_ascii_hexdigit()),
        "lease {:?} accepted from {body:?}",
        request.lease
    );
    assert_eq!(
        Block::new(request.era, request.authority, request.start, request.len).ok(),
        Some(tail),
        "{body:?}"
    );
    assert_eq!(
        (tail.era(), tail.authority(), tail.start(), tail.len()),
        (request.era, request.authority, request.start, request.len)
    );

    object_of(
        data,
        request,
        &[
            "scope",
            "sequence",
            "lease",
            "era",
            "authority",
            "start",
            "len",
        ],
        &[],
    );

    let decoded = Ok((request.clone(), tail));
    check_written_back(&body, request, GiveBackRequest::decode, &decoded);
}

/// `request`, written back by serde_json (compact and pretty), is read by `decode` as `decoded`,
/// and by no other decoder.
fn check_written_back<R: serde::Serialize + Debug, D: PartialEq + Debug>(
    body: &str,
    request: &R,
    decode: impl Fn(&[u8]) -> D,
    decoded: &D,
) {
    for encoded in [
        serde_json::to_vec(request).expect("a request always serializes"),
        serde_json::to_vec_pretty(request).expect("a request always serializes"),
    ] {
        assert_eq!(
            &decode(&encoded),
            decoded,
            "{request:?} written as {:?} from {body:?}",
            String::from_utf8_lossy(&encoded)
        );
        let accepted = [
            AllocateRequest::decode(&encoded).is_ok(),
            IdsRequest::decode(&encoded).is_ok(),
            GiveBackRequest::decode(&encoded).is_ok(),
        ];
        let readers = accepted.into_iter().filter(|&ok| ok).count();
        assert_eq!(readers, 1, "{request:?} read as another request");
    }
}

/// Two leases of 32 hex digits: the body is written with one, then the other.
const LEASES: [&str; 2] = [
    "0123456789abcdef0123456789abcdef",
    "FEDCBA9876543210fedcba9876543210",
];

/// A JSON object with a `lease` field: the lease changes nothing but the lease, and never shows
/// in an error. (The object is written again by serde_json, keys sorted, a duplicate key kept
/// once: the body given is a JSON object all the same.)
fn check_lease_unseen(data: &[u8]) {
    let Ok(Value::Object(mut object)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    if !object.contains_key("lease") {
        return;
    }
    object.insert("lease".into(), Value::from(""));
    let without = serde_json::to_string(&object)
        .expect("a JSON value always serializes")
        .to_ascii_lowercase();
    if LEASES
        .iter()
        .any(|lease| without.contains(&lease.to_ascii_lowercase()))
    {
        return;
    }
    let [first, second] = LEASES.map(|lease| {
        object.insert("lease".into(), Value::from(lease));
        let body = serde_json::to_string(&object).expect("a JSON value always serializes");
        (lease, GiveBackRequest::decode(body.as_bytes()), body)
    });
    match (&first.1, &second.1) {
        (Err(a), Err(b)) => {
            for (lease, error, body) in [(first.0, a, &first.2), (second.0, b, &second.2)] {
                assert!(
                    !error
                        .0
                        .to_ascii_lowercase()
                        .contains(&lease.to_ascii_lowercase()),
                    "the error {error} shows the lease of {body:?}"
                );
            }
            assert_eq!(a, b, "{:?} against {:?}", first.2, second.2);
        }
        (Ok((a, tail_a)), Ok((b, tail_b))) => {
            assert_eq!((a.lease.as_str(), b.lease.as_str()), (first.0, second.0));
            let a = GiveBackRequest {
                lease: b.lease.clone(),
                ..a.clone()
            };
            assert_eq!(
                (&a, tail_a),
                (b, tail_b),
                "{:?} against {:?}",
                first.2,
                second.2
            );
        }
        (a, b) => panic!(
            "the lease decides: {a:?} for {:?}, {b:?} for {:?}",
            first.2, second.2
        ),
    }
}

fn check_names(body: &str, scope: &str, sequence: &str) {
    assert!(
        validate_name(NameKind::Scope, scope).is_ok(),
        "scope {scope:?} accepted from {body:?}"
    );
    assert!(
        validate_name(NameKind::Sequence, sequence).is_ok(),
        "sequence {sequence:?} accepted from {body:?}"
    );
}

/// The accepted body as a JSON value: one object, nothing after it (`from_slice` checks the end
/// too), each key one of `required` or `optional`, every `required` one present and holding the
/// value it has in `request` (as serde_json writes it: the value decoded).
fn object_of(
    data: &[u8],
    request: &impl serde::Serialize,
    required: &[&str],
    optional: &[&str],
) -> serde_json::Map<String, Value> {
    let body = String::from_utf8_lossy(data);
    let value: Value = serde_json::from_slice(data)
        .unwrap_or_else(|e| panic!("accepted, but not one JSON value ({e}): {body:?}"));
    let Value::Object(object) = value else {
        panic!("accepted, but not an object: {body:?}");
    };
    for key in object.keys() {
        assert!(
            required.contains(&key.as_str()) || optional.contains(&key.as_str()),
            "unknown field {key:?} in {body:?}"
        );
    }
    let written = serde_json::to_value(request).expect("a request always serializes");
    for field in required {
        assert!(object.contains_key(*field), "no {field} in {body:?}");
        assert_eq!(object[*field], written[*field], "{field} in {body:?}");
    }
    object
}

fn check_error(data: &[u8], error: &BadRequest) {
    let shown = error.to_string();
    assert_eq!(shown, error.0);
    assert!(
        !shown.is_empty(),
        "empty error for {:?}",
        String::from_utf8_lossy(data)
    );
    assert!(
        shown.len() <= 6 * data.len() + 512,
        "a {}-byte error for a {}-byte body: {shown:?} for {:?}",
        shown.len(),
        data.len(),
        String::from_utf8_lossy(data)
    );
}
