//! `RemoteAuthority` under a `BlockGenerator`: ids through two servers, failover when one stops,
//! TLS with a certificate made here, refused tokens and URLs.

mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use common::{ALL, SHOP};
use gdid_engine::{Authority, BlockGenerator, BlockGeneratorBuilder, MemoryAuthority};
use gdid_http::client::{RemoteAuthority, RemoteError, RemoteOptions};
use gdid_testkit::tls::TestCa;

fn options(token: &str) -> RemoteOptions {
    RemoteOptions::default()
        .token(token)
        .timeout(Duration::from_millis(500))
}

/// The authority that `server` serves, reached with the token of scope `shop`.
async fn shop_authority(server: &common::Running) -> RemoteAuthority {
    RemoteAuthority::connect(&server.url, &options(SHOP))
        .await
        .unwrap()
}

/// A generator of `shop/orders` from `remote`, in blocks of 100.
fn blocks_of_100(remote: RemoteAuthority) -> BlockGeneratorBuilder {
    BlockGenerator::builder("shop", "orders")
        .authority(remote)
        .fixed_block_size(100)
}

/// A generator of `shop/orders` in blocks of 50 from the server `first`, failing over to
/// `second`.
async fn first_then_second(
    first: &common::Running,
    second: &common::Running,
) -> BlockGeneratorBuilder {
    BlockGenerator::builder("shop", "orders")
        .authority(shop_authority(first).await)
        .authority(shop_authority(second).await)
        .fixed_block_size(50)
}

#[tokio::test]
async fn a_generator_fails_over_between_two_servers_and_never_repeats_an_id() {
    let one = Arc::new(MemoryAuthority::new(1));
    let two = Arc::new(MemoryAuthority::new(2));
    let first = common::start(common::builder(one.clone()).build(), None).await;
    let second = common::start(common::builder(two.clone()).build(), None).await;
    let ids = first_then_second(&first, &second)
        .await
        .no_prefetch()
        .build()
        .unwrap();
    let mut seen = HashSet::new();
    for _ in 0..120 {
        assert!(seen.insert(ids.next_id().await.unwrap()));
    }
    // Served by authority 1, the first listed, while it answers.
    assert!(seen.iter().all(|id| id.authority() == 1));
    first.stop().await;
    for _ in 0..120 {
        let id = ids.next_id().await.expect("authority 2 still answers");
        assert!(seen.insert(id), "{id} issued twice");
    }
    assert!(seen.iter().any(|id| id.authority() == 2));
    ids.close().await.unwrap();
    second.stop().await;
}

#[tokio::test]
async fn connect_reads_the_number_and_refuses_a_bad_token() {
    let (server, authority) = common::memory_server().await;
    let remote = RemoteAuthority::connect(&server.url, &options(ALL))
        .await
        .unwrap();
    assert_eq!(remote.number(), 1);
    assert_eq!(remote.label(), server.url);
    let refused = RemoteAuthority::connect(&server.url, &options("not-a-token-of-this-server"))
        .await
        .unwrap_err();
    assert!(refused.is_unauthorized(), "{refused}");
    assert!(!refused.to_string().contains("not-a-token"), "{refused}");
    // A token that may not use the scope: every allocation is refused, nothing allocated.
    let shop_only = shop_authority(&server).await;
    let error = shop_only
        .allocate("billing", "invoices", 10)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("403"), "{error}");
    assert_eq!(authority.allocations(), 0);
    server.stop().await;
}

#[tokio::test]
async fn bad_urls_are_refused_without_their_password() {
    for url in [
        "ftp://h",
        "http://",
        "https:///v1",
        "http://user:hunter2@127.0.0.1:1",
        "127.0.0.1:8080",
    ] {
        let error = RemoteAuthority::connect(url, &options(SHOP))
            .await
            .unwrap_err();
        assert!(
            matches!(error, RemoteError::InvalidUrl { .. }),
            "{url}: {error}"
        );
        assert!(!error.to_string().contains("hunter2"), "{error}");
    }
    // Nobody listening: a transport error, quickly.
    let error = RemoteAuthority::connect("http://127.0.0.1:9", &options(SHOP))
        .await
        .unwrap_err();
    assert!(matches!(error, RemoteError::Transport { .. }), "{error}");
}

#[tokio::test]
async fn tls_with_a_certificate_made_at_test_time() {
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let certificate = certified.cert.pem();
    let key = certified.signing_key.serialize_pem();
    let tls = gdid_http::server::tls_config(certificate.as_bytes(), key.as_bytes()).unwrap();
    let authority = Arc::new(MemoryAuthority::new(3));
    let server = common::start(common::builder(authority.clone()).build(), Some(tls)).await;
    let url = format!("https://localhost:{}", server.addr.port());

    let trusted = options(SHOP).root_certificate_pem(certificate.as_bytes());
    let remote = RemoteAuthority::connect(&url, &trusted).await.unwrap();
    let ids = BlockGenerator::builder("shop", "orders")
        .authority(remote)
        .build()
        .unwrap();
    let id = ids.next_id().await.unwrap();
    assert_eq!((id.authority(), id.counter()), (3, 1));
    ids.close().await.unwrap();

    // Without the certificate trusted, no request gets through.
    let error = RemoteAuthority::connect(&url, &options(SHOP))
        .await
        .unwrap_err();
    assert!(matches!(error, RemoteError::Transport { .. }), "{error}");
    // Plain HTTP to the TLS port gets no answer either.
    let plain = format!("http://127.0.0.1:{}", server.addr.port());
    let error = RemoteAuthority::connect(&plain, &options(SHOP))
        .await
        .unwrap_err();
    assert!(matches!(error, RemoteError::Transport { .. }), "{error}");
    // A broken certificate or key is named.
    let error = gdid_http::server::tls_config(b"nothing", key.as_bytes()).unwrap_err();
    assert!(error.to_string().starts_with("the certificate"), "{error}");
    let error = gdid_http::server::tls_config(certificate.as_bytes(), b"nothing").unwrap_err();
    assert!(error.to_string().starts_with("the private key"), "{error}");
    server.stop().await;
}

#[tokio::test]
async fn a_closing_generator_gives_its_unused_ids_back_through_the_server() {
    let (server, authority) = common::memory_server().await;
    let remote = shop_authority(&server).await;
    let ids = blocks_of_100(remote.clone()).no_prefetch().build().unwrap();
    for _ in 0..10 {
        ids.next_id().await.unwrap();
    }
    // What the engine withdraws from the block (all but the ten served, less what a thread's
    // slice still holds) goes back, and is issued next.
    let returned = ids.close().await.unwrap();
    assert!(returned >= 80, "{returned}");
    let next = authority.allocate("shop", "orders", 1).await.unwrap();
    assert_eq!(next.start(), 101 - returned);
    // A tail of a block this client never received is not sent at all.
    let foreign = gdid_engine::Block::new(0, 1, 5, 7).unwrap();
    assert!(!remote.give_back("shop", "orders", foreign).await.unwrap());
    server.stop().await;
}

#[tokio::test]
async fn a_closing_generator_gives_back_its_prefetched_block_and_its_rest() {
    let (server, authority) = common::memory_server().await;
    let remote = shop_authority(&server).await;
    let ids = blocks_of_100(remote).build().unwrap();
    for _ in 0..60 {
        ids.next_id().await.unwrap();
    }
    // Past the low-water mark: the next block is fetched in the background. Once the store has
    // given it, `close` waits for its reply to arrive and gives it back too.
    while authority.allocations() < 2 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let returned = ids.close().await.unwrap();
    assert!(
        returned >= 130,
        "the prefetched block and the rest: {returned}"
    );
    let next = authority.allocate("shop", "orders", 1).await.unwrap();
    assert_eq!(next.start(), 201 - returned);
    server.stop().await;
}

#[tokio::test]
async fn two_generators_sharing_an_authority_keep_each_others_leases() {
    let (server, authority) = common::memory_server().await;
    let remote = shop_authority(&server).await;
    let generator = || blocks_of_100(remote.clone()).no_prefetch().build().unwrap();
    let (first, second) = (generator(), generator());
    first.next_id().await.unwrap();
    second.next_id().await.unwrap();
    // The first's block is not the store's latest: nothing of it goes back, and the second's
    // lease survives that attempt.
    assert_eq!(first.close().await.unwrap(), 0);
    let returned = second.close().await.unwrap();
    assert!(returned >= 90, "{returned}");
    let next = authority.allocate("shop", "orders", 1).await.unwrap();
    assert_eq!(next.start(), 201 - returned);
    server.stop().await;
}

#[tokio::test]
async fn a_server_that_takes_smaller_blocks_is_failed_over_not_fatal() {
    let small = Arc::new(MemoryAuthority::new(1));
    let large = Arc::new(MemoryAuthority::new(2));
    let first = common::start(common::builder(small.clone()).max_block(10).build(), None).await;
    let second = common::start(common::builder(large.clone()).build(), None).await;
    let ids = first_then_second(&first, &second).await.build().unwrap();
    let id = ids.next_id().await.expect("authority 2 takes blocks of 50");
    assert_eq!(id.authority(), 2);
    assert_eq!(small.allocations(), 0);
    ids.close().await.unwrap();
    first.stop().await;
    second.stop().await;
}

#[tokio::test]
async fn mutual_tls_lets_in_only_clients_with_a_certificate_of_its_ca() {
    let (ca, other_ca) = (TestCa::new(), TestCa::new());
    let (server_chain, server_key) = ca.server("localhost");
    let tls = gdid_http::server::mutual_tls_config(
        server_chain.as_bytes(),
        server_key.as_bytes(),
        ca.pem().as_bytes(),
    )
    .unwrap();
    let server = common::start(
        common::builder(Arc::new(MemoryAuthority::new(4))).build(),
        Some(tls),
    )
    .await;
    let url = format!("https://localhost:{}", server.addr.port());
    let trusted = options(SHOP).root_certificate_pem(ca.pem().as_bytes());

    let (chain, key) = ca.client("client");
    let with_certificate = trusted
        .clone()
        .client_certificate_pem(chain.as_bytes(), key.as_bytes());
    let remote = RemoteAuthority::connect(&url, &with_certificate)
        .await
        .unwrap();
    let block = remote.allocate("shop", "orders", 10).await.unwrap();
    assert_eq!(block.authority(), 4);

    // No certificate, or one another CA signed: refused in the handshake.
    let (stranger_chain, stranger_key) = other_ca.client("client");
    let stranger = trusted
        .clone()
        .client_certificate_pem(stranger_chain.as_bytes(), stranger_key.as_bytes());
    for refused in [&trusted, &stranger] {
        let error = RemoteAuthority::connect(&url, refused).await.unwrap_err();
        assert!(matches!(error, RemoteError::Transport { .. }), "{error}");
    }
    // The certificate does not stand in for the token.
    let no_token = RemoteOptions::default()
        .root_certificate_pem(ca.pem().as_bytes())
        .client_certificate_pem(chain.as_bytes(), key.as_bytes());
    let error = RemoteAuthority::connect(&url, &no_token).await.unwrap_err();
    assert!(error.is_unauthorized(), "{error}");
    // A client CA file without a certificate is named.
    let error = gdid_http::server::mutual_tls_config(
        server_chain.as_bytes(),
        server_key.as_bytes(),
        b"nothing",
    )
    .unwrap_err();
    assert!(error.to_string().starts_with("the client CA"), "{error}");
    server.stop().await;
}
