//! The replies no other test drives: every refusal of an authority as the one decision
//! (`ErrorKind::recourse`) answers it (409 `exhausted`; 500 `corrupt`, `switched` and
//! `misconfigured`; 503 `unavailable` with `Retry-After` for what a retry may change; 400 for a
//! size the request gave), the 408 of `/v1/ids` for a body too slow, 503 `shutting_down` once
//! the server closed its generators; each final or retryable as the API says, none carrying the
//! store's words, and none allocating anything.

mod common;

use std::sync::Arc;

use common::ALL;
use gdid_engine::testing::Refusing;
use gdid_engine::{Authority, AuthorityError, MemoryAuthority, NumberConflict};
use serde_json::{Value, json};

/// A server over `authority` answers a request for a block of 10 with `status` and `code`, with
/// or without `Retry-After` as `retry` says, and without the store's words.
async fn a_block_is_answered(authority: Refusing, status: u16, code: &str, retry: bool) {
    let server = common::start(common::builder(Arc::new(authority)).build(), None).await;
    let (got, retry_after, reply) = post(
        &server.url,
        "/v1/blocks",
        json!({"scope": "shop", "sequence": "orders", "size": 10}),
    )
    .await;
    assert_eq!(
        (got, reply["error"]["code"].as_str()),
        (status, Some(code)),
        "{reply}"
    );
    assert_eq!(retry_after.is_some(), retry, "{reply}: Retry-After");
    assert!(!reply.to_string().contains("secret-detail"), "{reply}");
    server.stop().await;
}

/// POSTs `body` to `path` with the all-scopes token: status, `Retry-After`, reply.
async fn post(url: &str, path: &str, body: Value) -> (u16, Option<String>, Value) {
    let reply = common::post_json(url, path, ALL, &body).await;
    let status = reply.status().as_u16();
    let retry = reply
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = serde_json::from_slice(&reply.bytes().await.unwrap()).unwrap();
    (status, retry, body)
}

#[tokio::test]
async fn refusals_are_answered_with_their_codes_and_without_the_stores_words() {
    for (refusal, status, code) in [
        (
            (|| AuthorityError::Exhausted) as fn() -> AuthorityError,
            409,
            "exhausted",
        ),
        (
            || AuthorityError::Corrupt("row 7: secret-detail".into()),
            500,
            "corrupt",
        ),
        (
            || {
                AuthorityError::Number(NumberConflict::Recorded {
                    store: "secret-detail".into(),
                    recorded: 2,
                    asked: 1,
                })
            },
            500,
            "misconfigured",
        ),
        (
            || AuthorityError::Switched {
                record: "secret-detail".into(),
                remedy: "gdid sequences fence".into(),
            },
            500,
            "switched",
        ),
    ] {
        let authority = Arc::new(Refusing::new(refusal));
        let server = common::start(common::builder(authority.clone()).build(), None).await;
        for (path, body) in [
            (
                "/v1/blocks",
                json!({"scope": "shop", "sequence": "orders", "size": 10}),
            ),
            (
                "/v1/ids",
                json!({"scope": "shop", "sequence": "orders", "count": 1}),
            ),
        ] {
            let (got, retry, reply) = post(&server.url, path, body).await;
            assert_eq!(
                (got, reply["error"]["code"].as_str()),
                (status, Some(code)),
                "{path}: {reply}"
            );
            assert_eq!(retry, None, "{path} {code}: final, no Retry-After");
            assert!(!reply.to_string().contains("secret-detail"), "{reply}");
        }
        assert!(authority.calls() >= 2);
        server.stop().await;
    }
}

/// The refusals a retry may change (a lost race, a store that failed): 503 with `Retry-After`;
/// a size the request gave that no store takes: 400.
#[tokio::test]
async fn transient_refusals_say_when_to_try_again_and_bad_sizes_are_the_requests() {
    for refusal in [
        (|| AuthorityError::store("secret-detail")) as fn() -> AuthorityError,
        || AuthorityError::Contention {
            record: "secret-detail".into(),
            attempts: 20,
            last: None,
        },
    ] {
        a_block_is_answered(Refusing::new(refusal), 503, "unavailable", true).await;
    }
    let too_large = || AuthorityError::InvalidSize(0);
    a_block_is_answered(Refusing::new(too_large), 400, "bad_request", false).await;
}

#[tokio::test]
async fn the_ids_route_answers_a_body_too_slow_408_and_allocates_nothing() {
    let (server, authority) = common::memory_server().await;
    let answer = common::answer_to_a_cut_off_body(server.addr, "/v1/ids", ALL).await;
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("\"timeout\""), "{answer}");
    let next = authority.allocate("shop", "orders", 1).await.unwrap();
    assert_eq!(next.start(), 1, "nothing was allocated");
    server.stop().await;
}

#[tokio::test]
async fn once_closed_the_ids_route_answers_shutting_down_and_allocates_nothing() {
    let authority = Arc::new(MemoryAuthority::new(1));
    let built = common::builder(authority.clone()).build();
    let server = common::start(built.clone(), None).await;
    let (status, _, reply) = post(
        &server.url,
        "/v1/ids",
        json!({"scope": "shop", "sequence": "orders", "count": 1}),
    )
    .await;
    assert_eq!(status, 200, "{reply}");
    // Closing gives the block's rest back: the counter is at 2 again.
    built.close().await;
    let (status, retry, reply) = post(
        &server.url,
        "/v1/ids",
        json!({"scope": "shop", "sequence": "orders", "count": 1}),
    )
    .await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (503, Some("shutting_down")),
        "{reply}"
    );
    assert!(retry.is_some(), "another authority may answer: retryable");
    let next = authority.allocate("shop", "orders", 1).await.unwrap();
    assert_eq!(next.start(), 2, "nothing was allocated after the close");
    server.stop().await;
}

/// `/v1/metrics` needs the `metrics` permission, and shows a token only its scopes' series.
#[tokio::test]
async fn metrics_need_their_permission_and_show_only_the_tokens_scopes() {
    let scrape = "# TYPE gdid_ids_taken_total counter\n\
                  gdid_ids_taken_total{scope=\"shop\",sequence=\"orders\"} 5\n\
                  gdid_ids_taken_total{scope=\"hr\",sequence=\"staff\"} 7\n\
                  process_threads 4\n";
    let authority = Arc::new(MemoryAuthority::new(1));
    let built = common::builder(authority)
        .metrics(Arc::new(move || scrape.to_owned()))
        .build();
    let server = common::start(built, None).await;
    let get = |token: &'static str| {
        let url = server.url.clone();
        async move {
            let reply = common::get(&url, "/v1/metrics", Some(token)).await;
            (reply.status().as_u16(), reply.text().await.unwrap())
        }
    };
    let (status, body) = get(common::SHOP).await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = get(common::SHOP_METRICS).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("scope=\"shop\""), "{body}");
    assert!(!body.contains("scope=\"hr\""), "{body}");
    assert!(
        body.contains("# TYPE") && body.contains("process_threads 4"),
        "{body}"
    );
    let (status, body) = get(ALL).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("scope=\"hr\""), "{body}");
    server.stop().await;
}

#[tokio::test]
async fn a_token_over_its_rate_is_answered_429_and_allocates_nothing_while_others_are_served() {
    let (server, authority) = common::memory_server_with(|server| server.rate_limit(3)).await;
    let ask = json!({"scope": "shop", "sequence": "orders", "count": 1});
    for _ in 0..3 {
        let (status, _, reply) = post(&server.url, "/v1/ids", ask.clone()).await;
        assert_eq!(status, 200, "{reply}");
    }
    // The counter of the sequence the refused request asks for, read before and after it.
    let before = authority.allocate("shop", "refused", 1).await.unwrap();
    let block = json!({"scope": "shop", "sequence": "refused", "size": 10});
    let (status, retry, reply) = post(&server.url, "/v1/blocks", block).await;
    assert_eq!(
        (status, reply["error"]["code"].as_str()),
        (429, Some("rate_limited")),
        "{reply}"
    );
    assert_eq!(retry.as_deref(), Some("1"));
    let after = authority.allocate("shop", "refused", 1).await.unwrap();
    assert_eq!(
        after.start(),
        before.start() + 1,
        "the refused request allocated"
    );
    // Another token has a rate of its own.
    let other = common::get(&server.url, "/v1/authority", Some(common::SHOP)).await;
    assert_eq!(other.status(), 200);
    server.stop().await;
}
