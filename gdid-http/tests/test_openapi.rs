//! The OpenAPI document of `/v1` (`gdid-http/openapi.json`) says the truth: it is served as
//! committed, lists exactly the router's routes, and every reply a real server sends, and every
//! value of the wire types, fits the schema the document declares for its route and status.
//! Reply schemas refuse unknown fields and list every field as the types serialize it, so a field
//! added to a wire type and not to the document fails here.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use common::{ALL, NO_GIVE_BACK, SHOP, SHOP_METRICS, client};
use gdid_core::{Form, Gdid};
use gdid_engine::{Authority, AuthorityError, Block, MemoryAuthority};
use gdid_http::server::ReadyCheck;
use gdid_http::wire::{
    self, AllocateRequest, AuthorityInfo, BlockReply, ErrorBody, ErrorReply, GiveBackReply,
    GiveBackRequest, IdsReply, IdsRequest,
};
use serde::Serialize;
use serde_json::{Value, json};

/// The document as committed, and as the server serves it.
const DOCUMENT: &str = include_str!("../openapi.json");

/// The HTTP methods a path item of OpenAPI may hold.
const METHODS: [&str; 8] = [
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];

fn document() -> Value {
    serde_json::from_str(DOCUMENT).expect("openapi.json is JSON")
}

/// The value a local `$ref` (`#/…`) of the document points at, or `value` itself.
fn resolve<'a>(doc: &'a Value, value: &'a Value) -> &'a Value {
    match value.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let pointer = reference
                .strip_prefix('#')
                .unwrap_or_else(|| panic!("not a local reference: {reference}"));
            let target = doc
                .pointer(pointer)
                .unwrap_or_else(|| panic!("{reference} points at nothing"));
            resolve(doc, target)
        }
        None => value,
    }
}

/// The reply the document declares for `method path` and `status`: the operation's own, or, for
/// 404 and 405, the routes' fallbacks (`#/components/responses/NotFound`, `MethodNotAllowed`).
fn declared<'a>(doc: &'a Value, method: &str, path: &str, status: u16) -> &'a Value {
    let operation = doc["paths"]
        .get(path)
        .and_then(|item| item.get(method.to_ascii_lowercase()));
    let own = operation.and_then(|operation| operation["responses"].get(status.to_string()));
    let reply = match (own, status) {
        (Some(reply), _) => reply,
        (None, 404) if operation.is_none() => &doc["components"]["responses"]["NotFound"],
        (None, 405) if operation.is_none() && doc["paths"].get(path).is_some() => {
            &doc["components"]["responses"]["MethodNotAllowed"]
        }
        _ => panic!("the document declares no {status} for {method} {path}"),
    };
    resolve(doc, reply)
}

/// The errors of `instance` against `schema` (a schema of the document, whose `$ref`s point into
/// its `#/components`), by JSON Schema 2020-12, OpenAPI 3.1's dialect.
fn misfits(doc: &Value, schema: &Value, instance: &Value) -> Vec<String> {
    let root = json!({ "components": doc["components"], "allOf": [schema] });
    let validator = jsonschema::draft202012::options()
        .build(&root)
        .unwrap_or_else(|e| panic!("not a schema: {schema}: {e}"));
    validator
        .iter_errors(instance)
        .map(|error| format!("{error} (at {})", error.instance_path()))
        .collect()
}

/// `instance` fits `schema`; `what` says where it came from.
fn fits(doc: &Value, schema: &Value, instance: &Value, what: &str) {
    let misfits = misfits(doc, schema, instance);
    assert!(
        misfits.is_empty(),
        "{what}: {instance} does not fit the document's schema {schema}: {misfits:#?}"
    );
}

/// The JSON schema of the body of `method path`'s `status` reply.
fn reply_schema<'a>(doc: &'a Value, method: &str, path: &str, status: u16) -> &'a Value {
    &declared(doc, method, path, status)["content"]["application/json"]["schema"]
}

/// The JSON schema of the request body of `method path`.
fn request_schema<'a>(doc: &'a Value, method: &str, path: &str) -> &'a Value {
    &doc["paths"][path][method]["requestBody"]["content"]["application/json"]["schema"]
}

/// Every (METHOD, path) of the document.
fn documented_routes(doc: &Value) -> BTreeSet<(String, String)> {
    let mut routes = BTreeSet::new();
    for (path, item) in doc["paths"].as_object().unwrap() {
        for method in METHODS {
            if item.get(method).is_some() {
                routes.insert((method.to_ascii_uppercase(), path.clone()));
            }
        }
    }
    routes
}

/// The routes the router serves, by the wire constants it is built from.
fn wire_routes() -> BTreeSet<(String, String)> {
    [
        ("GET", wire::HEALTH),
        ("GET", wire::READY),
        ("GET", wire::AUTHORITY),
        ("POST", wire::BLOCKS),
        ("POST", wire::GIVE_BACK),
        ("POST", wire::IDS),
        ("GET", wire::METRICS),
        ("GET", wire::OPENAPI),
    ]
    .into_iter()
    .map(|(method, path)| (method.to_owned(), path.to_owned()))
    .collect()
}

/// The names of the properties of an object schema (through a `$ref`, and the `allOf`s it is
/// made of).
fn property_names(doc: &Value, schema: &Value) -> BTreeSet<String> {
    let schema = resolve(doc, schema);
    let mut names: BTreeSet<String> = schema
        .get("properties")
        .and_then(Value::as_object)
        .map(|properties| properties.keys().cloned().collect())
        .unwrap_or_default();
    for part in schema
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        names.extend(property_names(doc, part));
    }
    names
}

/// A wire value with every field set fits `schema`, which names exactly its fields.
fn wire_value_fits(doc: &Value, schema: &Value, value: &impl Serialize, what: &str) {
    let value = serde_json::to_value(value).unwrap();
    fits(doc, schema, &value, what);
    let fields: BTreeSet<String> = value.as_object().unwrap().keys().cloned().collect();
    assert_eq!(
        fields,
        property_names(doc, schema),
        "{what}: the fields of the wire type and of the document differ"
    );
}

#[test]
fn the_document_is_openapi_3_1_of_this_version_and_lists_the_routers_routes() {
    let doc = document();
    assert_eq!(doc["openapi"], "3.1.0");
    assert_eq!(doc["info"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(documented_routes(&doc), wire_routes());
    // Pretty-printed, as committed: one field a line, ending with a new line.
    assert!(DOCUMENT.ends_with("}\n") && DOCUMENT.lines().count() > 100);
    // Every local reference points at something.
    fn walk(doc: &Value, value: &Value) {
        match value {
            Value::Object(map) => {
                let _ = resolve(doc, value);
                map.values().for_each(|v| walk(doc, v));
            }
            Value::Array(items) => items.iter().for_each(|v| walk(doc, v)),
            _ => {}
        }
    }
    walk(&doc, &doc);
    // Every schema of it compiles (`misfits` panics on one that does not).
    for schema in doc["components"]["schemas"].as_object().unwrap().values() {
        let _ = misfits(&doc, schema, &json!(null));
    }
    // Security: a bearer token everywhere but health and this document.
    assert_eq!(doc["security"], json!([{ "bearer": [] }]));
    for (method, path) in documented_routes(&doc) {
        let operation = &doc["paths"][&path][method.to_ascii_lowercase()];
        let open = [wire::HEALTH, wire::OPENAPI].contains(&path.as_str());
        assert_eq!(
            operation.get("security") == Some(&json!([])),
            open,
            "{method} {path}"
        );
        if !open {
            assert!(
                operation["responses"].get("401").is_some(),
                "{method} {path}"
            );
        }
    }
}

#[test]
fn every_wire_type_fits_the_schema_of_its_route() {
    let doc = document();
    let blocks = request_schema(&doc, "post", wire::BLOCKS);
    wire_value_fits(
        &doc,
        blocks,
        &AllocateRequest {
            scope: "shop".into(),
            sequence: "orders".into(),
            size: 100,
            vicinity: Some(wire::COUNTER_MAX),
        },
        "AllocateRequest",
    );
    wire_value_fits(
        &doc,
        request_schema(&doc, "post", wire::GIVE_BACK),
        &GiveBackRequest {
            scope: "shop".into(),
            sequence: "orders".into(),
            lease: "0123456789abcdef0123456789ABCDEF".into(),
            era: u32::MAX,
            authority: 15,
            start: 1,
            len: wire::COUNTER_MAX,
        },
        "GiveBackRequest",
    );
    wire_value_fits(
        &doc,
        request_schema(&doc, "post", wire::IDS),
        &IdsRequest {
            scope: "s".into(),
            sequence: "q".into(),
            count: 3,
            form: Form::Elink,
        },
        "IdsRequest",
    );
    for block in [
        Block::new(0, 1, 1, 100).unwrap(),
        Block::new(u32::MAX, 15, wire::COUNTER_MAX, 1).unwrap(),
        Block::new(7, 0, 0, wire::COUNTER_MAX + 1).unwrap(),
    ] {
        wire_value_fits(
            &doc,
            reply_schema(&doc, "post", wire::BLOCKS, 200),
            &BlockReply {
                lease: Some("00ff".repeat(8)),
                ..BlockReply::from(block)
            },
            "BlockReply",
        );
        fits(
            &doc,
            reply_schema(&doc, "post", wire::BLOCKS, 200),
            &serde_json::to_value(BlockReply::from(block)).unwrap(),
            "BlockReply without a lease",
        );
    }
    let ids: Vec<Gdid> = [
        "0:0:1",
        "0:1:42",
        "4294967295:15:1152921504606846975",
        "1280:2:8902382",
    ]
    .iter()
    .map(|id| id.parse().unwrap())
    .collect();
    for form in Form::ALL {
        let reply = IdsReply {
            form,
            ids: ids.iter().map(|&id| form.write(id)).collect(),
        };
        wire_value_fits(
            &doc,
            reply_schema(&doc, "post", wire::IDS, 200),
            &reply,
            &format!("IdsReply {form:?}"),
        );
        // Each form's ids are told apart from those of the forms of other characters (hex,
        // leb and compact are all hex digits: a pattern cannot tell them apart).
        let digits = |form| matches!(form, Form::Hex | Form::Leb | Form::Compact);
        for other in Form::ALL {
            if other != form && !(digits(form) && digits(other)) {
                let wrong = json!({ "form": other, "ids": reply.ids });
                assert!(
                    !misfits(&doc, reply_schema(&doc, "post", wire::IDS, 200), &wrong).is_empty(),
                    "{form:?} ids pass as {other:?}: {wrong}"
                );
            }
        }
    }
    wire_value_fits(
        &doc,
        reply_schema(&doc, "get", wire::AUTHORITY, 200),
        &AuthorityInfo {
            authority: 15,
            max_block: wire::COUNTER_MAX,
            max_count: u64::MAX,
            version: env!("CARGO_PKG_VERSION").into(),
        },
        "AuthorityInfo",
    );
    for returned in [true, false] {
        wire_value_fits(
            &doc,
            reply_schema(&doc, "post", wire::GIVE_BACK, 200),
            &GiveBackReply { returned },
            "GiveBackReply",
        );
    }
    // Every error reply the document declares, with each code it lists (and no other).
    let error_schema = &doc["components"]["schemas"]["ErrorReply"];
    let codes: Vec<String> =
        serde_json::from_value(doc["components"]["schemas"]["ErrorCode"]["enum"].clone()).unwrap();
    let error = |code: &str| ErrorReply {
        error: ErrorBody {
            code: code.into(),
            message: "what is wrong".into(),
        },
    };
    wire_value_fits(&doc, error_schema, &error("bad_request"), "ErrorReply");
    assert_eq!(
        serde_json::to_value(error("x")).unwrap()["error"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<BTreeSet<_>>(),
        property_names(&doc, &error_schema["properties"]["error"]),
        "ErrorBody's fields"
    );
    for (method, path) in documented_routes(&doc) {
        let operation = &doc["paths"][&path][method.to_ascii_lowercase()];
        for (status, reply) in operation["responses"].as_object().unwrap() {
            if status.starts_with('2') {
                continue;
            }
            let schema = &resolve(&doc, reply)["content"]["application/json"]["schema"];
            let allowed: Vec<String> = serde_json::from_value(
                schema["properties"]["error"]["properties"]["code"]["enum"].clone(),
            )
            .unwrap_or_else(|e| panic!("{method} {path} {status}: no list of codes: {e}"));
            for code in &codes {
                let misfits = misfits(&doc, schema, &serde_json::to_value(error(code)).unwrap());
                assert_eq!(
                    misfits.is_empty(),
                    allowed.contains(code),
                    "{method} {path} {status} `{code}`: {misfits:?}"
                );
            }
        }
    }
    for schema in [error_schema, reply_schema(&doc, "post", wire::BLOCKS, 200)] {
        assert!(
            !misfits(
                &doc,
                schema,
                &json!({ "error": { "code": "busy", "message": "m", "more": 1 } })
            )
            .is_empty()
        );
    }
}

/// A name of `n` characters.
fn name(n: usize) -> String {
    "a".repeat(n)
}

#[test]
fn request_schemas_refuse_what_the_server_refuses() {
    let doc = document();
    let long = name(80);
    let too_long = name(81);
    // (body, whether the server's default limits take it): the schema agrees with the decoders.
    let blocks = [
        json!({"scope": "shop", "sequence": "orders", "size": 1}),
        json!({"scope": "shop", "sequence": "orders", "size": 1u64 << 31}),
        json!({"scope": "shop", "sequence": "orders", "size": (1u64 << 31) + 1}),
        json!({"scope": "shop", "sequence": "orders", "size": 0}),
        json!({"scope": "shop", "sequence": "orders", "size": -1}),
        json!({"scope": "shop", "sequence": "orders", "size": "1"}),
        json!({"scope": "shop", "sequence": "orders", "size": 1, "vicinity": null}),
        json!({"scope": "shop", "sequence": "orders", "size": 1, "vicinity": wire::COUNTER_MAX}),
        json!({"scope": "shop", "sequence": "orders", "size": 1, "vicinity": wire::COUNTER_MAX + 1}),
        json!({"scope": "shop", "sequence": "orders", "size": 1, "extra": 1}),
        json!({"scope": "shop", "sequence": "orders"}),
        json!({"scope": long, "sequence": "a.b-c_d", "size": 1}),
        json!({"scope": too_long, "sequence": "orders", "size": 1}),
        json!({"scope": "", "sequence": "orders", "size": 1}),
        json!({"scope": "-shop", "sequence": "orders", "size": 1}),
        json!({"scope": "shop.", "sequence": "orders", "size": 1}),
        json!({"scope": "a..b", "sequence": "orders", "size": 1}),
        json!({"scope": "a b", "sequence": "orders", "size": 1}),
        json!({"scope": "café", "sequence": "orders", "size": 1}),
        json!({"scope": "shop\n", "sequence": "orders", "size": 1}),
        json!({"scope": 1, "sequence": "orders", "size": 1}),
        json!(["shop", "orders", 1]),
        json!(null),
    ];
    for body in blocks {
        let decoded = AllocateRequest::decode(body.to_string().as_bytes());
        let taken = decoded.is_ok_and(|request| request.size <= 1 << 31);
        let misfits = misfits(&doc, request_schema(&doc, "post", wire::BLOCKS), &body);
        assert_eq!(misfits.is_empty(), taken, "{body}: {misfits:?}");
    }
    let ids = [
        json!({"scope": "s", "sequence": "q", "count": 1}),
        json!({"scope": "s", "sequence": "q", "count": 10_000, "form": "hex"}),
        json!({"scope": "s", "sequence": "q", "count": 10_001}),
        json!({"scope": "s", "sequence": "q", "count": 0}),
        json!({"scope": "s", "sequence": "q", "count": 1, "form": "elink"}),
        json!({"scope": "s", "sequence": "q", "count": 1, "form": "base64"}),
        json!({"scope": "s", "sequence": "q", "count": 1, "form": null}),
        json!({"scope": "s", "sequence": "q", "count": 1, "size": 1}),
        json!({"scope": "s", "count": 1}),
    ];
    for body in ids {
        let decoded = IdsRequest::decode(body.to_string().as_bytes());
        let taken = decoded.is_ok_and(|request| request.count <= 10_000);
        let misfits = misfits(&doc, request_schema(&doc, "post", wire::IDS), &body);
        assert_eq!(misfits.is_empty(), taken, "{body}: {misfits:?}");
    }
    let lease = "0123456789abcdef0123456789abcdef";
    let tail = |era: u64, authority: u64, start: u64, len: u64| {
        json!({"scope": "s", "sequence": "q", "lease": lease, "era": era, "authority": authority,
               "start": start, "len": len})
    };
    let give_backs = [
        tail(0, 1, 1, 5),
        tail(0, 1, 0, 5),
        tail(1, 1, 0, 5),
        tail(0, 16, 1, 5),
        tail(0, 1, 1, 0),
        tail(u64::from(u32::MAX), 15, wire::COUNTER_MAX, 1),
        tail(u64::from(u32::MAX) + 1, 1, 1, 1),
        tail(0, 1, wire::COUNTER_MAX + 1, 1),
        tail(1, 1, 0, wire::COUNTER_MAX + 1),
        tail(1, 1, 0, wire::COUNTER_MAX + 2),
        json!({"scope": "s", "sequence": "q", "lease": "0123", "era": 0, "authority": 1, "start": 1, "len": 1}),
        json!({"scope": "s", "sequence": "q", "lease": lease.to_uppercase(), "era": 0, "authority": 1, "start": 1, "len": 1}),
        json!({"scope": "s", "sequence": "q", "lease": format!("{}g", &lease[1..]), "era": 0, "authority": 1, "start": 1, "len": 1}),
        json!({"scope": "s", "sequence": "q", "era": 0, "authority": 1, "start": 1, "len": 1}),
    ];
    for body in give_backs {
        let decoded = GiveBackRequest::decode(body.to_string().as_bytes());
        let misfits = misfits(&doc, request_schema(&doc, "post", wire::GIVE_BACK), &body);
        assert_eq!(misfits.is_empty(), decoded.is_ok(), "{body}: {misfits:?}");
    }
    // The rules no JSON Schema can state, which the document states in words (and
    // scripts/schemathesis_hooks.py knows): an integer written as a JSON integer only, a tail
    // within the counters (`start + len - 1` at most 2^60 - 1, each within its own range).
    for (path, body, decoded) in [
        (
            wire::BLOCKS,
            json!({"scope": "s", "sequence": "q", "size": 1.0}),
            AllocateRequest::decode(br#"{"scope":"s","sequence":"q","size":1.0}"#).is_ok(),
        ),
        (
            wire::IDS,
            json!({"scope": "s", "sequence": "q", "count": 1e3}),
            IdsRequest::decode(br#"{"scope":"s","sequence":"q","count":1e3}"#).is_ok(),
        ),
        (
            wire::GIVE_BACK,
            tail(1, 1, wire::COUNTER_MAX, 2),
            GiveBackRequest::decode(tail(1, 1, wire::COUNTER_MAX, 2).to_string().as_bytes())
                .is_ok(),
        ),
    ] {
        let misfits = misfits(&doc, request_schema(&doc, "post", path), &body);
        assert!(misfits.is_empty() && !decoded, "{body}: {misfits:?}");
    }
}

/// An authority that refuses every allocation of sequence `refused` with what `refusal` makes,
/// and every give-back; allocates other sequences from memory.
struct Refusing {
    memory: MemoryAuthority,
    refusal: fn() -> AuthorityError,
}

impl Authority for Refusing {
    fn number(&self) -> u8 {
        1
    }

    fn label(&self) -> String {
        "refusing".into()
    }

    async fn allocate(
        &self,
        scope: &str,
        sequence: &str,
        size: u64,
    ) -> Result<Block, AuthorityError> {
        if sequence == "refused" {
            return Err((self.refusal)());
        }
        self.memory.allocate(scope, sequence, size).await
    }

    async fn give_back(&self, _: &str, _: &str, _: Block) -> Result<bool, AuthorityError> {
        Err((self.refusal)())
    }
}

/// A reply as the client read it.
struct Reply {
    status: u16,
    content_type: String,
    headers: BTreeMap<String, String>,
    body: String,
}

/// Sends `method path` with `token` and `body` to `url`.
async fn send(
    url: &str,
    method: &str,
    path: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> Reply {
    let mut request = client().request(method.parse().unwrap(), format!("{url}{path}"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    if let Some(body) = body {
        request = request
            .header("content-type", "application/json")
            .body(body.to_owned());
    }
    let response = request.send().await.unwrap();
    let headers: BTreeMap<String, String> = response
        .headers()
        .iter()
        .map(|(name, value)| (name.as_str().to_owned(), value.to_str().unwrap().to_owned()))
        .collect();
    Reply {
        status: response.status().as_u16(),
        content_type: headers.get("content-type").cloned().unwrap_or_default(),
        headers,
        body: response.text().await.unwrap(),
    }
}

/// The reply in raw HTTP/1.1 `text`, as `common::answer_to_a_cut_off_body` returns it.
fn parse_raw(text: &str) -> Reply {
    let (head, body) = text.split_once("\r\n\r\n").expect("a whole head");
    let mut lines = head.lines();
    let status = lines
        .next()
        .unwrap()
        .split(' ')
        .nth(1)
        .unwrap()
        .parse()
        .unwrap();
    let headers: BTreeMap<String, String> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(name, value)| (name.to_ascii_lowercase(), value.trim().to_owned()))
        .collect();
    Reply {
        status,
        content_type: headers.get("content-type").cloned().unwrap_or_default(),
        headers,
        body: body.to_owned(),
    }
}

/// What the replies seen so far covered: (METHOD, path, status).
type Seen = BTreeSet<(String, String, u16)>;

/// `reply` to `method path` is one the document declares: its status, its media type, its
/// required headers (each fitting its schema) and its body (fitting its schema).
fn conforms(doc: &Value, seen: &mut Seen, method: &str, path: &str, reply: &Reply, expected: u16) {
    let what = format!("{method} {path} → {} {}", reply.status, reply.body);
    assert_eq!(reply.status, expected, "{what}");
    let declared = declared(doc, method, path, reply.status);
    let content = declared["content"].as_object().unwrap();
    let (media_type, media) = content
        .iter()
        .find(|(media_type, _)| **media_type == reply.content_type)
        .unwrap_or_else(|| {
            panic!(
                "{what}: content-type {} is not declared",
                reply.content_type
            )
        });
    for (name, header) in declared
        .get("headers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        let header = resolve(doc, header);
        let value = reply.headers.get(&name.to_ascii_lowercase());
        if header["required"] == true {
            let value = value.unwrap_or_else(|| panic!("{what}: no {name} header"));
            fits(
                doc,
                &header["schema"],
                &json!(value),
                &format!("{what}: header {name}"),
            );
        }
    }
    let body = if media_type == "application/json" {
        serde_json::from_str(&reply.body).unwrap_or_else(|e| panic!("{what}: not JSON: {e}"))
    } else {
        Value::String(reply.body.clone())
    };
    fits(doc, &media["schema"], &body, &what);
    seen.insert((method.to_owned(), path.to_owned(), reply.status));
}

/// Every status each route of the document declares.
fn declared_replies(doc: &Value) -> Seen {
    let mut all = Seen::new();
    for (method, path) in documented_routes(doc) {
        let operation = &doc["paths"][&path][method.to_ascii_lowercase()];
        for status in operation["responses"].as_object().unwrap().keys() {
            all.insert((method.clone(), path.clone(), status.parse().unwrap()));
        }
    }
    all
}

#[tokio::test]
async fn every_reply_of_a_live_server_is_one_the_document_declares() {
    let doc = document();
    let mut seen = Seen::new();
    let ready = Arc::new(AtomicBool::new(true));
    let answer = ready.clone();
    let check: ReadyCheck = Arc::new(move || {
        let ok = answer.load(Ordering::Relaxed);
        Box::pin(async move { if ok { Ok(()) } else { Err("down".into()) } })
    });
    let authority = Arc::new(MemoryAuthority::new(1));
    let built = common::builder(authority)
        .ready_check(check)
        .metrics(Arc::new(|| {
            "# TYPE gdid_ids_taken_total counter\ngdid_ids_taken_total{scope=\"shop\"} 3\n".into()
        }))
        .build();
    let server = common::start(built.clone(), None).await;
    let url = server.url.as_str();
    let shop = |size: u64| json!({"scope": "shop", "sequence": "orders", "size": size}).to_string();
    let ids = |form: &str, count: u64| {
        json!({"scope": "shop", "sequence": "orders", "count": count, "form": form}).to_string()
    };

    // Served as committed, byte for byte, without a token.
    let served = send(url, "GET", wire::OPENAPI, None, None).await;
    assert_eq!(
        served.body, DOCUMENT,
        "GET /v1/openapi.json is not the committed file"
    );
    conforms(&doc, &mut seen, "GET", wire::OPENAPI, &served, 200);

    for (method, path, token, body, status) in [
        ("GET", wire::HEALTH, None, None, 200),
        ("GET", wire::READY, Some(ALL), None, 200),
        ("GET", wire::READY, None, None, 401),
        ("GET", wire::AUTHORITY, Some(SHOP), None, 200),
        (
            "GET",
            wire::AUTHORITY,
            Some("not-a-token-0123456789"),
            None,
            401,
        ),
        ("GET", wire::METRICS, Some(SHOP_METRICS), None, 200),
        ("GET", wire::METRICS, Some(NO_GIVE_BACK), None, 403),
        ("GET", wire::METRICS, None, None, 401),
        (
            "POST",
            wire::BLOCKS,
            Some(NO_GIVE_BACK),
            Some(shop(10)),
            200,
        ),
        (
            "POST",
            wire::BLOCKS,
            Some(SHOP),
            Some("{\"scope\":".into()),
            400,
        ),
        ("POST", wire::BLOCKS, Some(SHOP), Some(shop(0)), 400),
        ("POST", wire::BLOCKS, Some(SHOP), Some(shop(2_000_000)), 400),
        ("POST", wire::BLOCKS, None, Some(shop(1)), 401),
        (
            "POST",
            wire::BLOCKS,
            Some(SHOP),
            Some(shop(1).replace("shop", "hr")),
            403,
        ),
        (
            "POST",
            wire::BLOCKS,
            Some(SHOP),
            Some(" ".repeat(20_000)),
            413,
        ),
        ("POST", wire::IDS, Some(SHOP), Some(ids("text", 5)), 200),
        ("POST", wire::IDS, Some(SHOP), Some(ids("hex", 5)), 200),
        ("POST", wire::IDS, Some(SHOP), Some(ids("elink", 5)), 200),
        ("POST", wire::IDS, Some(SHOP), Some(ids("text", 1001)), 400),
        ("POST", wire::IDS, Some(SHOP), Some(ids("base64", 1)), 400),
        (
            "POST",
            wire::IDS,
            Some("Basic x"),
            Some(ids("text", 1)),
            401,
        ),
        (
            "POST",
            wire::IDS,
            Some(SHOP),
            Some(ids("text", 1).replace("shop", "hr")),
            403,
        ),
        ("POST", wire::IDS, Some(SHOP), Some(" ".repeat(20_000)), 413),
        ("POST", wire::GIVE_BACK, None, Some("{}".into()), 401),
        ("POST", wire::GIVE_BACK, Some(SHOP), Some("{}".into()), 400),
        (
            "POST",
            wire::GIVE_BACK,
            Some(SHOP),
            Some(" ".repeat(20_000)),
            413,
        ),
        ("GET", "/v1/nothing", None, None, 404),
        ("GET", "/", Some(ALL), None, 404),
        ("GET", wire::IDS, Some(ALL), None, 405),
        ("DELETE", wire::HEALTH, None, None, 405),
        ("POST", wire::OPENAPI, None, Some("{}".into()), 405),
        ("PUT", wire::BLOCKS, Some(ALL), Some(shop(1)), 405),
    ] {
        let reply = send(url, method, path, token, body.as_deref()).await;
        conforms(&doc, &mut seen, method, path, &reply, status);
    }

    // A block with a lease, its tail given back, once; by a token without the permission, 403.
    let reply = send(url, "POST", wire::BLOCKS, Some(SHOP), Some(&shop(10))).await;
    conforms(&doc, &mut seen, "POST", wire::BLOCKS, &reply, 200);
    let block: BlockReply = serde_json::from_str(&reply.body).unwrap();
    let give_back = serde_json::to_string(&GiveBackRequest {
        scope: "shop".into(),
        sequence: "orders".into(),
        lease: block
            .lease
            .clone()
            .expect("a lease for a token allowed to give back"),
        era: block.era,
        authority: block.authority,
        start: block.start + 4,
        len: block.len - 4,
    })
    .unwrap();
    for (token, status, returned) in [
        (SHOP, 200, Some(true)),
        (SHOP, 200, Some(false)),
        (NO_GIVE_BACK, 403, None),
    ] {
        let reply = send(url, "POST", wire::GIVE_BACK, Some(token), Some(&give_back)).await;
        conforms(&doc, &mut seen, "POST", wire::GIVE_BACK, &reply, status);
        if let Some(returned) = returned {
            let reply: GiveBackReply = serde_json::from_str(&reply.body).unwrap();
            assert_eq!(reply.returned, returned);
        }
    }
    let other_scope = give_back.replace("\"shop\"", "\"hr\"");
    let reply = send(url, "POST", wire::GIVE_BACK, Some(SHOP), Some(&other_scope)).await;
    conforms(&doc, &mut seen, "POST", wire::GIVE_BACK, &reply, 403);

    // The 404 lists the router's routes: the document's.
    let reply = send(url, "GET", "/v2", None, None).await;
    let message: ErrorReply = serde_json::from_str(&reply.body).unwrap();
    let listed = message
        .error
        .message
        .strip_prefix("no such route: ")
        .unwrap()
        .to_owned();
    let mut routes = BTreeSet::new();
    for group in listed.split("; ") {
        let (method, paths) = group.split_once(' ').unwrap();
        for path in paths.split(", ") {
            routes.insert((method.to_owned(), path.to_owned()));
        }
    }
    assert_eq!(routes, documented_routes(&doc), "{listed}");

    // Bodies cut off: 408.
    for path in [wire::BLOCKS, wire::GIVE_BACK, wire::IDS] {
        let reply = parse_raw(&common::answer_to_a_cut_off_body(server.addr, path, ALL).await);
        conforms(&doc, &mut seen, "POST", path, &reply, 408);
    }

    // A store that does not answer: ready 503; a closed server's ids, 503 `shutting_down`.
    ready.store(false, Ordering::Relaxed);
    let reply = send(url, "GET", wire::READY, Some(ALL), None).await;
    conforms(&doc, &mut seen, "GET", wire::READY, &reply, 503);
    built.close().await;
    let reply = send(url, "POST", wire::IDS, Some(SHOP), Some(&ids("text", 1))).await;
    conforms(&doc, &mut seen, "POST", wire::IDS, &reply, 503);
    server.stop().await;

    // Without metrics: 404.
    let (server, _) = common::memory_server().await;
    let reply = send(&server.url, "GET", wire::METRICS, Some(ALL), None).await;
    conforms(&doc, &mut seen, "GET", wire::METRICS, &reply, 404);
    server.stop().await;

    // A store that refuses: 409 exhausted, 500 corrupt, 503 unavailable.
    for (refusal, status) in [
        (
            (|| AuthorityError::Exhausted) as fn() -> AuthorityError,
            409,
        ),
        (|| AuthorityError::Corrupt("row 7".into()), 500),
        (|| AuthorityError::Conflict("a race".into()), 503),
    ] {
        let authority = Arc::new(Refusing {
            memory: MemoryAuthority::new(1),
            refusal,
        });
        let server = common::start(common::builder(authority).build(), None).await;
        let url = server.url.as_str();
        let refused = |field: &str, n: u64| {
            json!({"scope": "shop", "sequence": "refused", field: n}).to_string()
        };
        for (path, body) in [
            (wire::BLOCKS, refused("size", 10)),
            (wire::IDS, refused("count", 1)),
        ] {
            let reply = send(url, "POST", path, Some(SHOP), Some(&body)).await;
            conforms(&doc, &mut seen, "POST", path, &reply, status);
        }
        if status != 409 {
            // A give-back reaches the store only with a lease of a block it gave.
            let reply = send(url, "POST", wire::BLOCKS, Some(SHOP), Some(&shop(10))).await;
            let block: BlockReply = serde_json::from_str(&reply.body).unwrap();
            let give_back = json!({"scope": "shop", "sequence": "orders", "lease": block.lease,
                "era": block.era, "authority": block.authority, "start": block.start + 1,
                "len": block.len - 1})
            .to_string();
            let reply = send(url, "POST", wire::GIVE_BACK, Some(SHOP), Some(&give_back)).await;
            conforms(&doc, &mut seen, "POST", wire::GIVE_BACK, &reply, status);
        }
        server.stop().await;
    }

    // A token over its rate: 429 on every route that takes a token (one request a second, the
    // first spent on the first route).
    let server = common::start(
        common::builder(Arc::new(MemoryAuthority::new(1)))
            .rate_limit(1)
            .metrics(Arc::new(String::new))
            .build(),
        None,
    )
    .await;
    let url = server.url.as_str();
    let first = send(url, "GET", wire::AUTHORITY, Some(ALL), None).await;
    conforms(&doc, &mut seen, "GET", wire::AUTHORITY, &first, 200);
    for (method, path, body) in [
        ("GET", wire::READY, None),
        ("GET", wire::AUTHORITY, None),
        ("GET", wire::METRICS, None),
        ("POST", wire::BLOCKS, Some(shop(10))),
        ("POST", wire::GIVE_BACK, Some("{}".to_owned())),
        ("POST", wire::IDS, Some(ids("text", 1))),
    ] {
        let reply = send(url, method, path, Some(ALL), body.as_deref()).await;
        conforms(&doc, &mut seen, method, path, &reply, 429);
    }
    server.stop().await;

    // The document declares no reply that was not seen here.
    let unseen: Vec<_> = declared_replies(&doc).difference(&seen).cloned().collect();
    assert!(unseen.is_empty(), "declared and never seen: {unseen:?}");
}
