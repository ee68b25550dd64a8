//! `gdid::Store`: the front-door example on every store, the strategies it hands out, and the
//! typed errors of bad URLs (never with their password).
// A build without any store feature only checks that every URL is refused.
#![cfg_attr(
    not(any(
        feature = "sqlite",
        feature = "mysql",
        feature = "postgres",
        feature = "mongodb"
    )),
    allow(dead_code, unused_imports)
)]

use std::error::Error as _;

use gdid::{Gdid, IdGenerator, Pick, RangeLayout, Store, StoreError};
#[allow(unused_imports)] // which are used depends on the store features
use gdid_testkit::{database, fresh, server, sqlite_url};

/// The example of the crate docs and README, as written, on the store of `url`.
async fn front_door_example(url: &str) -> Result<(Gdid, u8), Box<dyn std::error::Error>> {
    let store = gdid::Store::open(url).await?; // or mysql://, postgres://, mongodb://
    let orders = store.block_generator("shop", "orders").build()?; // this store's authority, recorded in it
    let id: Gdid = orders.next_id().await?;
    Ok((id, store.authority_number()))
}

/// Two opens and runs of the example on `url`: two different ids, of the store's recorded
/// authority, the second after the first.
async fn two_runs_differ(url: &str) {
    let (first, number) = front_door_example(url).await.expect("first run");
    let (second, again) = front_door_example(url).await.expect("second run");
    assert_eq!(
        number, again,
        "{url}: the store's number changed between opens"
    );
    assert_eq!(first.authority(), number);
    assert_eq!(second.authority(), number);
    assert_ne!(first, second, "{url}: two runs gave one id");
    assert!(second > first, "{url}: {second} after {first}");
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn example_on_sqlite() {
    two_runs_differ(&sqlite_url("gdid_front_door")).await;
}

#[cfg(feature = "mysql")]
#[tokio::test]
async fn example_on_mariadb() {
    let Some(url) = server("GDID_MYSQL_URL") else {
        return;
    };
    two_runs_differ(&database(&url, "gdid_front_door").await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn example_on_postgres() {
    let Some(url) = server("GDID_POSTGRES_URL") else {
        return;
    };
    two_runs_differ(&database(&url, "gdid_front_door").await).await;
}

/// `uri` with its database set to `name` (the test server's URI names none).
#[cfg(feature = "mongodb")]
fn mongo_database(uri: &str, name: &str) -> String {
    let (base, query) = uri.split_once('?').unwrap_or((uri, ""));
    let server = base.trim_end_matches('/');
    format!("{server}/{name}?{query}")
}

#[cfg(feature = "mongodb")]
#[tokio::test]
async fn example_on_mongodb() {
    let Some(uri) = server("GDID_MONGODB_URI") else {
        return;
    };
    two_runs_differ(&mongo_database(&uri, "gdid_front_door")).await;
}

/// The other strategies of a store: a one-at-a-time counter counts 1, 2, 3; a sharded counter
/// serves ids of its layout; a window generator refuses a batch of 0.
async fn strategies(url: &str) {
    let store = Store::open(url).await.expect("open");
    let sequence = fresh("seq");
    let counter = store.one_at_a_time("shop", &sequence);
    let counted = [
        counter.next_id().await.unwrap(),
        counter.next_id().await.unwrap(),
        counter.next_id().await.unwrap(),
    ];
    assert_eq!(counted, [1, 2, 3], "{url}");

    let layout = RangeLayout::new(1_000_000, 1_000_000, 4).expect("layout");
    let sharded = store
        .sharded(&sequence, layout, Pick::RoundRobin)
        .await
        .expect("sharded");
    let a = sharded.next_id().await.unwrap();
    let b = sharded.next_id().await.unwrap();
    assert_ne!(a, b, "{url}");
    let other = RangeLayout::new(1_000_000, 1_000_000, 5).expect("layout");
    let Err(refused) = store.sharded(&sequence, other, Pick::RoundRobin).await else {
        panic!("{url}: a second layout for {sequence} was accepted");
    };
    assert!(
        matches!(&refused, StoreError::Strategy { strategy: "sharded counter", sequence: s, .. } if *s == sequence),
        "{refused:?}"
    );

    let Err(refused) = store.window_generator(&sequence, 0) else {
        panic!("{url}: a window batch of 0 was accepted");
    };
    assert!(
        matches!(refused, StoreError::Strategy { .. }),
        "{refused:?}"
    );
    assert!(store.window_generator(&sequence, 100).is_ok());
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn strategies_on_sqlite() {
    strategies(&sqlite_url("gdid_front_door_strategies")).await;
}

#[cfg(feature = "mysql")]
#[tokio::test]
async fn strategies_on_mariadb() {
    let Some(url) = server("GDID_MYSQL_URL") else {
        return;
    };
    strategies(&database(&url, "gdid_front_door").await).await;
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn strategies_on_postgres() {
    let Some(url) = server("GDID_POSTGRES_URL") else {
        return;
    };
    strategies(&database(&url, "gdid_front_door").await).await;
}

#[cfg(feature = "mongodb")]
#[tokio::test]
async fn strategies_on_mongodb() {
    let Some(uri) = server("GDID_MONGODB_URI") else {
        return;
    };
    strategies(&mongo_database(&uri, "gdid_front_door")).await;
}

/// Everything an error says: its message, its sources' and its debug form.
fn everything_said(error: &StoreError) -> String {
    let mut said = format!("{error} {error:?}");
    let mut source = error.source();
    while let Some(inner) = source {
        said.push_str(&format!(" {inner}"));
        source = inner.source();
    }
    said
}

#[tokio::test]
async fn bad_urls_are_typed_errors_without_their_password() {
    for url in [
        "redis://u:hunter2@h/x",
        "http://u:hunter2@h",
        "ids.sqlite",
        "",
    ] {
        let error = Store::open(url).await.unwrap_err();
        assert!(
            matches!(error, StoreError::UnsupportedScheme { .. }),
            "{url}: {error:?}"
        );
        assert!(!everything_said(&error).contains("hunter2"), "{error:?}");
    }
}

#[cfg(feature = "sqlite")]
#[tokio::test]
async fn sqlite_without_a_path_is_an_invalid_url() {
    let error = Store::open("sqlite:").await.unwrap_err();
    assert!(matches!(error, StoreError::InvalidUrl { .. }), "{error:?}");
}

#[cfg(feature = "mysql")]
#[tokio::test]
async fn an_unreachable_mysql_server_is_a_connect_error_without_its_password() {
    // Port 1: nothing listens, the connection is refused at once.
    let error = Store::open("mysql://root:hunter2@127.0.0.1:1/test")
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Connect { .. }), "{error:?}");
    let said = everything_said(&error);
    assert!(!said.contains("hunter2"), "{said}");
    assert!(said.contains("127.0.0.1:1"), "the store is named: {said}");
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn an_unreachable_postgres_server_is_a_connect_error_without_its_password() {
    let error = Store::open("postgres://u:hunter2@127.0.0.1:1/test?password=hunter2")
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Connect { .. }), "{error:?}");
    assert!(!everything_said(&error).contains("hunter2"), "{error:?}");
}

#[cfg(feature = "mongodb")]
#[tokio::test]
async fn an_unreachable_mongodb_server_is_a_connect_error_without_its_password() {
    let error = Store::open("mongodb://u:hunter2@127.0.0.1:1/gdid?serverSelectionTimeoutMS=200")
        .await
        .unwrap_err();
    assert!(matches!(error, StoreError::Connect { .. }), "{error:?}");
    assert!(!everything_said(&error).contains("hunter2"), "{error:?}");
    let malformed = Store::open("mongodb://u:hunter2@/").await.unwrap_err();
    assert!(
        matches!(malformed, StoreError::Connect { .. }),
        "{malformed:?}"
    );
    assert!(
        !everything_said(&malformed).contains("hunter2"),
        "{malformed:?}"
    );
}

#[cfg(not(feature = "mongodb"))]
#[tokio::test]
async fn a_store_whose_feature_is_off_names_the_feature() {
    let error = Store::open("mongodb://u:hunter2@127.0.0.1/x")
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::FeatureDisabled {
                feature: "mongodb",
                ..
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("\"mongodb\""), "{error}");
    assert!(!everything_said(&error).contains("hunter2"), "{error:?}");
}

/// A URI naming no database opens the options' default one: its counters go on from those of the
/// URI that names it. `Store::authority` is that store's authority.
#[cfg(feature = "mongodb")]
#[tokio::test]
async fn the_default_mongodb_database_is_the_options_one() {
    let Some(uri) = server("GDID_MONGODB_URI") else {
        return;
    };
    let named = Store::open(&mongo_database(&uri, "gdid_front_door"))
        .await
        .expect("named");
    let by_default = Store::options()
        .default_mongodb_database("gdid_front_door")
        .open(&uri)
        .await
        .expect("by default");
    assert_eq!(named.authority_number(), by_default.authority_number());
    assert_eq!(
        by_default.authority().number(),
        by_default.authority_number()
    );
    let sequence = fresh("default_db");
    let first = named
        .one_at_a_time("shop", &sequence)
        .next_id()
        .await
        .unwrap();
    let second = by_default
        .one_at_a_time("shop", &sequence)
        .next_id()
        .await
        .unwrap();
    assert_eq!((first, second), (1, 2), "one counter, one database");
}
