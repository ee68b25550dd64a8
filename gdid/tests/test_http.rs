//! `http://` stores: authority servers (gdid-http's, over SQLite files) opened as stores, numbered
//! with other stores, and refusing what only their own store can do.

use gdid::http::server::{Server, ServerBuilder, Tokens};
use gdid::{IdGenerator, Pick, Preference, RangeLayout, Store, StoreError};
use gdid_testkit::sqlite_url;
use tokio::sync::oneshot;

const TOKEN: &str = "test-token-0123456789";

/// A server of the SQLite store of `test` as authority `number`: its URL, and what stops it.
async fn serve(test: &str, number: u8) -> (String, oneshot::Sender<()>) {
    serve_with(test, number, |builder| builder).await
}

/// [`serve`], the server set up by `configure`.
async fn serve_with(
    test: &str,
    number: u8,
    configure: impl FnOnce(ServerBuilder) -> ServerBuilder,
) -> (String, oneshot::Sender<()>) {
    let store = Store::options()
        .authority(number)
        .open(&sqlite_url(test))
        .await
        .unwrap();
    let tokens = Tokens::parse(&format!("{TOKEN} shop")).unwrap();
    let server = configure(Server::builder(
        store.authority().expect("numbered"),
        tokens,
    ))
    .build();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (stop, stopped) = oneshot::channel::<()>();
    tokio::spawn(async move {
        server
            .serve(listener, None, async {
                let _ = stopped.await;
            })
            .await
    });
    (url, stop)
}

fn options() -> gdid::OpenOptions {
    Store::options().http_token(TOKEN)
}

#[tokio::test]
async fn a_server_opens_as_a_store_with_its_own_number() {
    let (url, _stop) = serve("http_number", 4).await;
    let store = options().open(&url).await.unwrap();
    assert_eq!(store.authority_number(), Some(4));
    assert_eq!(store.label(), url);
    store.ready().await.unwrap();
    let orders = store.block_generator("shop", "orders").build().unwrap();
    let first = orders.next_id().await.unwrap();
    let second = orders.next_id().await.unwrap();
    assert_eq!((first.authority(), first.counter()), (4, 1));
    assert!(second > first);
    orders.close().await.unwrap();
    // Asking for another number than the server's is refused, as for any store.
    let error = options().authority(5).open(&url).await.unwrap_err();
    assert!(error.to_string().contains("is authority 4"), "{error}");
}

#[tokio::test]
async fn two_servers_of_one_number_are_never_listed_together() {
    let (one, _a) = serve("http_same_a", 2).await;
    let (two, _b) = serve("http_same_b", 2).await;
    let error = options().open_all(&[&one, &two]).await.unwrap_err();
    assert!(matches!(error, StoreError::Numbers { .. }), "{error}");
    assert!(
        error.to_string().contains("would both be authority 2"),
        "{error}"
    );
}

#[tokio::test]
async fn servers_listed_together_prefer_the_fastest_and_mix_with_databases() {
    let (one, _a) = serve("http_pair_a", 1).await;
    let (two, _b) = serve("http_pair_b", 2).await;
    let stores = options().open_all(&[&two, &one]).await.unwrap();
    assert_eq!(stores.numbers(), [Some(2), Some(1)]);
    let ids = stores.block_generator("shop", "orders").build().unwrap();
    assert_eq!(ids.config().preference, Preference::Fastest);
    ids.next_id().await.unwrap();
    // With a database beside them, the order given is the order tried.
    let database = sqlite_url("http_pair_db");
    let mixed = options().open_all(&[&one, &database]).await.unwrap();
    assert_eq!(mixed.numbers()[0], Some(1));
    assert_ne!(mixed.numbers()[1], Some(1));
    let ids = mixed.block_generator("shop", "orders").build().unwrap();
    assert_eq!(ids.config().preference, Preference::Listed);
}

#[test]
fn options_never_show_the_token() {
    let shown = format!("{:?}", Store::options().http_token(TOKEN));
    assert!(
        !shown.contains(TOKEN) && shown.contains("http_token"),
        "{shown}"
    );
}

#[tokio::test]
async fn without_the_token_a_server_cannot_be_opened() {
    let (url, _stop) = serve("http_token", 1).await;
    let error = Store::options()
        .http_token("wrong-token-0123456789")
        .open(&url)
        .await
        .unwrap_err();
    assert!(error.to_string().contains("401"), "{error}");
    assert!(!error.to_string().contains("wrong-token"), "{error}");
}

#[tokio::test]
async fn a_server_issues_gdids_only() {
    let (url, _stop) = serve("http_only", 1).await;
    let store = options().open(&url).await.unwrap();
    let counter = store.one_at_a_time("shop", "invoices");
    let error = counter.next_id().await.unwrap_err();
    assert!(error.to_string().contains("GDIDs only"), "{error}");
    let layout = RangeLayout::new(1, 1000, 4).unwrap();
    assert!(matches!(
        store.sharded("orders", layout, Pick::RoundRobin).await,
        Err(StoreError::Unsupported { .. })
    ));
    assert!(matches!(
        store.window_shard(),
        Err(StoreError::Unsupported { .. })
    ));
}

#[tokio::test]
async fn generators_ask_a_server_for_no_larger_block_than_it_takes() {
    let (small, _a) = serve_with("http_small", 1, |b| b.max_block(40)).await;
    let (large, _b) = serve("http_large", 2).await;
    let store = options().open(&small).await.unwrap();
    let ids = store.block_generator("shop", "orders").build().unwrap();
    assert_eq!(ids.config().max_block, 40);
    for _ in 0..200 {
        ids.next_id().await.unwrap();
    }
    ids.close().await.unwrap();
    // Listed together, the smallest of the servers' limits holds.
    let stores = options().open_all(&[&large, &small]).await.unwrap();
    let ids = stores.block_generator("shop", "orders").build().unwrap();
    assert_eq!(ids.config().max_block, 40);
}

/// `gdid::blocking`'s options carry the token to an `http://` store as the async ones do.
#[cfg(feature = "blocking")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_blocking_store_sends_the_token_of_its_options() {
    let (url, _stop) = serve("http_blocking", 6).await;
    let id = tokio::task::spawn_blocking(move || {
        let store = gdid::blocking::Store::options()
            .http_token(TOKEN)
            .open(&url)
            .unwrap();
        let orders = store.block_generator("shop", "orders").build().unwrap();
        let id = orders.next_id().unwrap();
        orders.close().unwrap();
        id
    })
    .await
    .unwrap();
    assert_eq!((id.authority(), id.counter()), (6, 1));
}
