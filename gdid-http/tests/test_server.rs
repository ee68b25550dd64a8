//! The server's routes through a real socket: what each answers, and what every bad request,
//! missing token or slow client gets (its status, and nothing allocated).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{ALL, SHOP, get, memory_server};
use gdid_core::Gdid;
use gdid_engine::{Authority, MemoryAuthority};
use gdid_http::wire::ErrorReply;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use common::client;

/// POSTs `body` to `path` with `token`: the status and the JSON reply.
async fn post(url: &str, path: &str, token: Option<&str>, body: Vec<u8>) -> (u16, Value) {
    let mut request = client().post(format!("{url}{path}")).body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let text = response.text().await.unwrap();
    (
        status,
        serde_json::from_str(&text).unwrap_or(Value::String(text)),
    )
}

/// POSTs a request for a block of `size` of `shop/orders` with `token`: the status and the JSON
/// reply.
async fn post_block(url: &str, token: &str, size: u64) -> (u16, Value) {
    let body = json!({"scope": "shop", "sequence": "orders", "size": size});
    post(url, "/v1/blocks", Some(token), bytes(body)).await
}

fn bytes(value: Value) -> Vec<u8> {
    serde_json::to_vec(&value).unwrap()
}

/// The error code of a reply, checking that it has the shape of [`ErrorReply`].
fn code(reply: &Value) -> String {
    let reply: ErrorReply = serde_json::from_value(reply.clone())
        .unwrap_or_else(|e| panic!("not an error reply: {reply}: {e}"));
    reply.error.code
}

/// Nothing was ever allocated from `authority`; then `server` stops.
async fn stop_with_nothing_allocated(server: common::Running, authority: &MemoryAuthority) {
    assert_eq!(authority.allocations(), 0, "{:?}", authority.states());
    server.stop().await;
}

#[tokio::test]
async fn a_block_is_allocated_persisted_and_sent() {
    let (server, authority) = memory_server().await;
    let (status, reply) = post(
        &server.url,
        "/v1/blocks",
        Some(SHOP),
        bytes(json!({"scope": "shop", "sequence": "orders", "size": 100, "vicinity": 5})),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["lease"].as_str().map(str::len), Some(32), "{reply}");
    let mut fields = reply.clone();
    fields.as_object_mut().unwrap().remove("lease");
    assert_eq!(
        fields,
        json!({"era": 0, "authority": 1, "start": 1, "len": 100})
    );
    // Persisted before the reply: the authority's counter is past the block.
    let next = authority.allocate("shop", "orders", 1).await.unwrap();
    assert_eq!(next.start(), 101);
    server.stop().await;
}

#[tokio::test]
async fn ids_come_in_every_form_from_the_servers_own_generator() {
    let (server, authority) = memory_server().await;
    let mut all = Vec::new();
    for form in ["text", "hex", "elink"] {
        let (status, reply) = post(
            &server.url,
            "/v1/ids",
            Some(ALL),
            bytes(json!({"scope": "shop", "sequence": "orders", "count": 3, "form": form})),
        )
        .await;
        assert_eq!(status, 200, "{reply}");
        assert_eq!(reply["form"], form);
        for id in reply["ids"].as_array().unwrap() {
            let id = id.as_str().unwrap();
            let parsed = match form {
                "text" => id.parse::<Gdid>().unwrap(),
                "hex" => id.parse::<Gdid>().unwrap(),
                _ => Gdid::from_elink(id).unwrap(),
            };
            all.push(parsed);
        }
    }
    assert_eq!(all.len(), 9);
    assert!(all.windows(2).all(|w| w[0] < w[1]), "{all:?}");
    assert!(all.iter().all(|id| id.authority() == 1));
    // Served from the generator's blocks, not a store round trip per request (the second
    // allocation is the prefetch at the low-water mark).
    assert!(authority.allocations() < 3, "{}", authority.allocations());
    // Closing gives the unused tail back.
    let returned = server.stop().await;
    assert!(returned > 0);
}

#[tokio::test]
async fn health_needs_no_token_and_everything_else_does() {
    let (server, authority) = memory_server().await;
    let health = get(&server.url, "/v1/health", None).await;
    assert_eq!(health.status(), 200);
    for path in ["/v1/ready", "/v1/authority", "/v1/metrics"] {
        let response = get(&server.url, path, None).await;
        assert_eq!(response.status(), 401, "{path}");
        assert!(response.headers().contains_key("www-authenticate"));
    }
    let info = get(&server.url, "/v1/authority", Some(SHOP)).await;
    let info: Value = info.json().await.unwrap();
    assert_eq!(info["authority"], 1);
    assert_eq!(info["max_block"], 1_000_000);
    let ready = get(&server.url, "/v1/ready", Some(SHOP)).await;
    assert_eq!(ready.status(), 200);
    stop_with_nothing_allocated(server, &authority).await;
}

#[tokio::test]
async fn requests_without_a_good_token_for_the_scope_allocate_nothing() {
    let (server, authority) = memory_server().await;
    let good = bytes(json!({"scope": "shop", "sequence": "orders", "size": 10}));
    let other_scope = bytes(json!({"scope": "billing", "sequence": "orders", "size": 10}));
    let cases: [(Option<&str>, &[u8], u16, &str); 5] = [
        (None, &good, 401, "unauthorized"),
        (
            Some("not-a-token-of-this-server"),
            &good,
            401,
            "unauthorized",
        ),
        (Some(""), &good, 401, "unauthorized"),
        (Some(SHOP), &other_scope, 403, "forbidden"),
        // A wrong token is refused before its body is even read.
        (
            Some("not-a-token-of-this-server"),
            b"{not json",
            401,
            "unauthorized",
        ),
    ];
    for path in ["/v1/blocks", "/v1/ids"] {
        for (token, body, status, expected) in &cases {
            let body = if path == "/v1/ids" {
                String::from_utf8_lossy(body)
                    .replace("size", "count")
                    .into_bytes()
            } else {
                body.to_vec()
            };
            let (got, reply) = post(&server.url, path, *token, body).await;
            assert_eq!(got, *status, "{path} {token:?}: {reply}");
            assert_eq!(code(&reply), *expected);
            assert!(!reply.to_string().contains("0123456789"), "{reply}");
        }
    }
    // A header that is not `Bearer …`.
    let basic = client()
        .post(format!("{}/v1/blocks", server.url))
        .basic_auth("shop", Some(SHOP))
        .body(good.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(basic.status(), 401);
    // The scheme's name in any case is the same scheme.
    let lower = client()
        .get(format!("{}/v1/authority", server.url))
        .header("authorization", format!("bearer {SHOP}"))
        .send()
        .await
        .unwrap();
    assert_eq!(lower.status(), 200);
    stop_with_nothing_allocated(server, &authority).await;
}

#[tokio::test]
async fn bad_bodies_sizes_and_names_get_400_and_allocate_nothing() {
    let (server, authority) = memory_server().await;
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("/v1/blocks", b"".to_vec(), "empty"),
        ("/v1/blocks", b"{\"scope\":".to_vec(), "EOF"),
        ("/v1/blocks", b"\xff\xfe".to_vec(), "body"),
        ("/v1/blocks", bytes(json!([1, 2])), "JSON object"),
        // serde alone would take a struct from an array of its fields
        (
            "/v1/blocks",
            bytes(json!(["shop", "orders", 100])),
            "JSON object",
        ),
        (
            "/v1/ids",
            bytes(json!(["shop", "orders", 3])),
            "JSON object",
        ),
        (
            "/v1/blocks",
            bytes(json!({"scope": "shop", "sequence": "orders"})),
            "size",
        ),
        (
            "/v1/blocks",
            bytes(json!({"scope": "shop", "sequence": "orders", "size": 0})),
            "size",
        ),
        (
            "/v1/blocks",
            bytes(json!({"scope": "shop", "sequence": "orders", "size": -5})),
            "invalid value",
        ),
        (
            "/v1/blocks",
            bytes(json!({"scope": "shop", "sequence": "orders", "size": 1_000_001})),
            "largest block",
        ),
        (
            "/v1/blocks",
            bytes(json!({"scope": "shop", "sequence": "orders", "size": u64::MAX})),
            "largest block",
        ),
        (
            "/v1/blocks",
            bytes(json!({"scope": "shop", "sequence": "or ders", "size": 1})),
            "sequence",
        ),
        (
            "/v1/blocks",
            bytes(json!({"scope": "shop", "sequence": "x".repeat(81), "size": 1})),
            "sequence",
        ),
        (
            "/v1/blocks",
            bytes(json!({"scope": "shop", "sequence": "orders", "size": 1, "admin": true})),
            "unknown field",
        ),
        (
            "/v1/blocks",
            bytes(json!({"scope": "shop", "sequence": "orders", "size": 1, "vicinity": u64::MAX})),
            "vicinity",
        ),
        (
            "/v1/ids",
            bytes(json!({"scope": "shop", "sequence": "orders", "count": 1001})),
            "largest count",
        ),
        (
            "/v1/ids",
            bytes(json!({"scope": "shop", "sequence": "orders", "count": 0})),
            "count",
        ),
        (
            "/v1/ids",
            bytes(json!({"scope": "shop", "sequence": "orders", "count": 1, "form": "bits"})),
            "unknown variant",
        ),
    ];
    for (path, body, says) in cases {
        let shown = String::from_utf8_lossy(&body).into_owned();
        let (status, reply) = post(&server.url, path, Some(SHOP), body).await;
        assert_eq!(status, 400, "{path} {shown}: {reply}");
        let expected = if says == "largest block" {
            "size_too_large"
        } else {
            "bad_request"
        };
        assert_eq!(code(&reply), expected, "{reply}");
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(says),
            "{path} {shown}: {message} should say {says}"
        );
    }
    stop_with_nothing_allocated(server, &authority).await;
}

#[tokio::test]
async fn a_body_over_the_limit_is_refused_unread() {
    let (server, authority) = memory_server().await;
    // 16 KiB is the limit; a client sending 8 MiB is cut off, its body never held whole.
    let huge = format!(
        "{{\"scope\":\"shop\",\"sequence\":\"orders\",\"size\":1,\"vicinity\":{}}}",
        "1".repeat(8 << 20)
    );
    let (status, reply) = post(&server.url, "/v1/blocks", Some(SHOP), huge.into_bytes()).await;
    assert_eq!(status, 413, "{reply}");
    assert_eq!(code(&reply), "too_large");
    stop_with_nothing_allocated(server, &authority).await;
}

#[tokio::test]
async fn unknown_routes_and_methods_are_refused() {
    let (server, authority) = memory_server().await;
    let (status, reply) = post(&server.url, "/v2/blocks", Some(SHOP), b"{}".to_vec()).await;
    assert_eq!((status, code(&reply).as_str()), (404, "not_found"));
    let reply = get(&server.url, "/v1/blocks", Some(SHOP)).await;
    assert_eq!(reply.status(), 405);
    let reply: Value = reply.json().await.unwrap();
    assert_eq!(code(&reply), "method_not_allowed");
    stop_with_nothing_allocated(server, &authority).await;
}

#[tokio::test]
async fn a_client_too_slow_with_its_headers_is_cut_off() {
    let (server, authority) = memory_server().await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(b"POST /v1/blocks HTTP/1.1\r\nHost: x\r\n")
        .await
        .unwrap();
    // The header timeout is 400 ms: the server waits that long, then closes the connection
    // (hyper answers 408 first, or nothing).
    let began = std::time::Instant::now();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut answer)).await;
    assert!(read.is_ok(), "the server kept a silent client for 5 s");
    assert!(
        began.elapsed() >= Duration::from_millis(350),
        "{:?}",
        began.elapsed()
    );
    let answer = String::from_utf8_lossy(&answer);
    assert!(
        answer.is_empty() || answer.starts_with("HTTP/1.1 408"),
        "{answer}"
    );
    stop_with_nothing_allocated(server, &authority).await;
}

#[tokio::test]
async fn a_client_too_slow_with_its_body_gets_408() {
    let (server, authority) = memory_server().await;
    let answer = common::answer_to_a_cut_off_body(server.addr, "/v1/blocks", SHOP).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"timeout\""), "{answer}");
    stop_with_nothing_allocated(server, &authority).await;
}

#[tokio::test]
async fn a_store_failure_is_503_without_the_stores_words() {
    use gdid_engine::testing::FaultyAuthority;
    let authority = Arc::new(FaultyAuthority::new(MemoryAuthority::new(2)));
    authority.set_down(true);
    let server = common::start(common::builder(authority.clone()).build(), None).await;
    let (status, reply) = post_block(&server.url, SHOP, 10).await;
    assert_eq!(
        (status, code(&reply).as_str()),
        (503, "unavailable"),
        "{reply}"
    );
    assert!(!reply.to_string().contains("injected"), "{reply}");
    authority.set_down(false);
    let (status, reply) = post_block(&server.url, SHOP, 10).await;
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["authority"], 2);
    server.stop().await;
}

#[tokio::test]
async fn sigterm_lets_an_allocation_in_flight_finish() {
    use gdid_engine::testing::{FaultyAuthority, Latency};
    let authority = Arc::new(
        FaultyAuthority::new(MemoryAuthority::new(1))
            .latency(Latency::Fixed(Duration::from_millis(300))),
    );
    let server = common::start(common::builder(authority.clone()).build(), None).await;
    let url = server.url.clone();
    let in_flight = tokio::spawn(async move { post_block(&url, SHOP, 10).await });
    // The allocation has reached the store (300 ms from its answer) when the stop begins.
    while authority.attempts() == 0 {
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    server.stop().await;
    let (status, reply) = in_flight.await.unwrap();
    assert_eq!(status, 200, "{reply}");
    assert_eq!(reply["start"], 1);
}

/// POSTs a block request and returns the reply.
async fn block(url: &str, token: &str, size: u64) -> Value {
    let (status, reply) = post_block(url, token, size).await;
    assert_eq!(status, 200, "{reply}");
    reply
}

/// POSTs the give-back of the tail of `block` from `from`, with `lease`: whether it went back.
async fn give_back(url: &str, token: &str, block: &Value, from: u64, lease: &str) -> (u16, Value) {
    let end = block["start"].as_u64().unwrap() + block["len"].as_u64().unwrap();
    post(
        url,
        "/v1/blocks/give-back",
        Some(token),
        bytes(json!({
            "scope": "shop", "sequence": "orders", "lease": lease,
            "era": block["era"], "authority": block["authority"], "start": from, "len": end - from,
        })),
    )
    .await
}

#[tokio::test]
async fn only_the_client_holding_the_latest_lease_gives_a_tail_back() {
    let (server, authority) = memory_server().await;
    let first = block(&server.url, SHOP, 100).await;
    let lease = first["lease"].as_str().unwrap().to_owned();
    assert_eq!(lease.len(), 32);
    // Another client with a token for the scope, guessing, or even holding the lease: refused,
    // nothing goes back.
    let guess = "0".repeat(32);
    for lease in [&guess, &lease] {
        let (status, reply) = give_back(&server.url, ALL, &first, 50, lease).await;
        assert_eq!(
            (status, reply["returned"].as_bool()),
            (200, Some(false)),
            "{reply}"
        );
    }
    // Not a tail of the block (it stops short of its end): refused, and the lease is spent.
    let second = block(&server.url, SHOP, 100).await;
    let lease = second["lease"].as_str().unwrap().to_owned();
    let end = second["start"].as_u64().unwrap() + 100;
    let (_, reply) = post(
        &server.url,
        "/v1/blocks/give-back",
        Some(SHOP),
        bytes(
            json!({"scope": "shop", "sequence": "orders", "lease": lease,
            "era": 0, "authority": 1, "start": end - 50, "len": 10}),
        ),
    )
    .await;
    assert_eq!(reply["returned"], false, "{reply}");
    // The right lease and the block's tail: back, and issued next.
    let third = block(&server.url, SHOP, 100).await;
    let lease = third["lease"].as_str().unwrap().to_owned();
    let from = third["start"].as_u64().unwrap() + 40;
    let (status, reply) = give_back(&server.url, SHOP, &third, from, &lease).await;
    assert_eq!(
        (status, reply["returned"].as_bool()),
        (200, Some(true)),
        "{reply}"
    );
    let again = authority.allocate("shop", "orders", 1).await.unwrap();
    assert_eq!(again.start(), from);
    // Twice: refused.
    let (_, reply) = give_back(&server.url, SHOP, &third, from, &lease).await;
    assert_eq!(reply["returned"], false, "{reply}");
    // Bad leases and tails, and another scope's token: their status.
    for (token, lease, status) in [(SHOP, "xyz", 400), (SHOP, &"g".repeat(32)[..], 400)] {
        let (got, reply) = give_back(&server.url, token, &third, from, lease).await;
        assert_eq!(got, status, "{reply}");
    }
    let (got, _) = post(
        &server.url,
        "/v1/blocks/give-back",
        Some(SHOP),
        bytes(
            json!({"scope": "billing", "sequence": "orders", "lease": "0".repeat(32),
            "era": 0, "authority": 1, "start": 5, "len": 1}),
        ),
    )
    .await;
    assert_eq!(got, 403);
    server.stop().await;
}

#[tokio::test]
async fn a_token_without_give_back_gets_no_lease_and_gives_nothing_back() {
    let (server, authority) = common::memory_server().await;
    let sent = block(&server.url, common::NO_GIVE_BACK, 100).await;
    assert!(sent.get("lease").is_none(), "{sent}");
    let (status, reply) = give_back(
        &server.url,
        common::NO_GIVE_BACK,
        &sent,
        50,
        &"0".repeat(32),
    )
    .await;
    assert_eq!(
        (status, code(&reply).as_str()),
        (403, "give_back_not_allowed"),
        "{reply}"
    );
    assert_eq!(
        authority
            .allocate("shop", "orders", 1)
            .await
            .unwrap()
            .start(),
        101
    );
    server.stop().await;
}

#[tokio::test]
async fn the_ids_route_makes_room_only_by_closing_an_idle_generator_of_the_same_scope() {
    // 8 places, 2 of them at most for one scope.
    let (server, authority) = common::memory_server_with(|server| server.max_sequences(8)).await;
    let ask = |scope: &'static str, sequence: &'static str| {
        let url = server.url.clone();
        async move {
            post(
                &url,
                "/v1/ids",
                Some(ALL),
                bytes(json!({"scope": scope, "sequence": sequence, "count": 1})),
            )
            .await
        }
    };
    assert_eq!(ask("shop", "a").await.0, 200);
    assert_eq!(ask("shop", "b").await.0, 200);
    // Both used just now: a third sequence of the scope is refused, and allocates nothing.
    let (status, reply) = ask("shop", "c").await;
    assert_eq!((status, code(&reply).as_str()), (503, "busy"), "{reply}");
    assert!(reply.to_string().contains("scope \\\"shop\\\""), "{reply}");
    assert!(authority.state("shop", "c").is_none());
    // The ones already served still are, and another tenant is served.
    assert_eq!(ask("shop", "a").await.0, 200);
    assert_eq!(ask("hr", "staff").await.0, 200);
    assert_eq!(ask("hr", "payroll").await.0, 200);
    server.stop().await;
}

#[tokio::test]
async fn an_idle_http2_connection_gives_its_place_up() {
    let authority = Arc::new(MemoryAuthority::new(1));
    let limits = gdid_http::server::ConnectionLimits {
        max_connections: 1,
        idle_timeout: Duration::from_millis(300),
        ..gdid_http::server::ConnectionLimits::default()
    };
    let server = common::start(
        common::builder(authority).connection_limits(limits).build(),
        None,
    )
    .await;
    let h2 = || {
        let _ = rustls::crypto::ring::default_provider().install_default();
        reqwest::Client::builder()
            .http2_prior_knowledge()
            .timeout(Duration::from_secs(3))
            .build()
            .unwrap()
    };
    let health = format!("{}/v1/health", server.url);
    // The first client keeps its HTTP/2 connection open in its pool, idle (a token keeps it).
    let first = h2();
    let shown = first
        .get(format!("{}/v1/authority", server.url))
        .bearer_auth(SHOP);
    assert_eq!(shown.send().await.unwrap().status(), 200);
    // The only place is taken: a second client gets in once the first has been idle 300 ms.
    let began = std::time::Instant::now();
    let second = h2()
        .get(&health)
        .send()
        .await
        .expect("the idle connection was closed");
    assert_eq!(second.status(), 200);
    assert!(
        began.elapsed() >= Duration::from_millis(200),
        "{:?}",
        began.elapsed()
    );
    drop(first);
    server.stop().await;
}

/// A sequence the store spells otherwise is refused by `/v1/ids` as final: 400, no
/// `Retry-After` (its clients would retry for ever).
#[tokio::test]
async fn a_second_spelling_is_a_final_refusal_on_the_ids_route() {
    let (server, authority) = memory_server().await;
    authority.allocate("shop", "Orders", 5).await.unwrap();
    let ask = json!({"scope": "shop", "sequence": "orders", "count": 1});
    let reply = common::post_json(&server.url, "/v1/ids", ALL, &ask).await;
    assert_eq!(reply.status(), 400);
    assert!(reply.headers().get("retry-after").is_none());
    let body: Value = serde_json::from_slice(&reply.bytes().await.unwrap()).unwrap();
    assert_eq!(body["error"]["code"], "bad_request", "{body}");
    server.stop().await;
}

/// A tokens file read again that cannot be used still revokes the tokens it no longer lists:
/// those it lists keep what they had, no token is added, until a file that can be used is read.
#[tokio::test]
async fn a_tokens_file_that_cannot_be_used_on_reload_revokes_the_tokens_it_no_longer_lists() {
    let server = common::builder(Arc::new(MemoryAuthority::new(1))).build();
    let running = common::start(server.clone(), None).await;
    let status = |token: &'static str| {
        let url = running.url.clone();
        async move { get(&url, "/v1/authority", Some(token)).await.status() }
    };
    let (all, shop, metrics, keeper) = (ALL, SHOP, common::SHOP_METRICS, common::NO_GIVE_BACK);
    // ALL and SHOP_METRICS are taken out; a new token is added; one line does not parse, and
    // KEEPER's own line is broken.
    let broken = format!(
        "{}\n{keeper} shop,\nnew-token-0123456789 *\nnot a line of a tokens file\n",
        gdid_http::server::hashed_line(shop, "shop:give-back"),
    );
    let refused = server.reload_tokens_text(&broken).unwrap_err();
    assert_eq!(refused.line, 2, "{refused}");
    assert_eq!(status(all).await, 401);
    assert_eq!(status(metrics).await, 401);
    assert_eq!(status("new-token-0123456789").await, 401);
    assert_eq!(status(shop).await, 200);
    assert_eq!(status(keeper).await, 200);
    // A file that cannot be read at all lists no token.
    server.reload_tokens_text("").unwrap_err();
    assert_eq!(status(shop).await, 401);
    // A good file: its tokens, all of them.
    let good = format!("{all} *\nnew-token-0123456789 shop\n");
    assert_eq!(server.reload_tokens_text(&good).unwrap(), 2);
    assert_eq!(status(all).await, 200);
    assert_eq!(status("new-token-0123456789").await, 200);
    assert_eq!(status(shop).await, 401);
    running.stop().await;
}

/// One token uses at most the server's bound of sequences (each a row in the store, and its
/// metrics series): beyond, 403 saying the bound and how to raise it; the sequences it used
/// before, and other tokens, are still served.
#[tokio::test]
async fn a_token_uses_a_bounded_number_of_sequences() {
    let (server, authority) =
        common::memory_server_with(|builder| builder.max_sequences_per_token(3)).await;
    let ask = |token: &'static str, path: &'static str, sequence: &'static str| {
        let url = server.url.clone();
        async move {
            let (field, value) = if path == "/v1/ids" {
                ("count", 1)
            } else {
                ("size", 10)
            };
            let body = json!({"scope": "shop", "sequence": sequence, field: value});
            post(&url, path, Some(token), bytes(body)).await
        }
    };
    for sequence in ["a", "b"] {
        assert_eq!(ask(ALL, "/v1/blocks", sequence).await.0, 200);
    }
    assert_eq!(ask(ALL, "/v1/ids", "c").await.0, 200);
    for path in ["/v1/blocks", "/v1/ids"] {
        let (status, reply) = ask(ALL, path, "d").await;
        assert_eq!(
            (status, code(&reply).as_str()),
            (403, "forbidden"),
            "{reply}"
        );
        let message = reply["error"]["message"].as_str().unwrap();
        assert!(
            message.contains('3') && message.contains("--max-sequences-per-token"),
            "{message}"
        );
    }
    // Nothing was made of the sequence refused.
    let made: Vec<String> = authority
        .states()
        .into_iter()
        .map(|((_, sequence), _)| sequence)
        .collect();
    assert_eq!(made, ["a", "b", "c"]);
    // The sequences it used, again; another token, its own three.
    assert_eq!(ask(ALL, "/v1/blocks", "a").await.0, 200);
    assert_eq!(ask(ALL, "/v1/ids", "a").await.0, 200);
    assert_eq!(ask(SHOP, "/v1/blocks", "d").await.0, 200);
    server.stop().await;
}
