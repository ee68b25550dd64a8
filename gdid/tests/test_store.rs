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

use gdid::{FenceScope, Gdid, IdGenerator, Pick, RangeLayout, Store, StoreError};
#[allow(unused_imports)] // which are used depends on the store features
use gdid_testkit::{database, fresh, server, sqlite_url};

/// The example of the crate docs and README, as written, on the store of `url`.
async fn front_door_example(url: &str) -> Result<(Gdid, Option<u8>), Box<dyn std::error::Error>> {
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
    assert_eq!(Some(first.authority()), number);
    assert_eq!(Some(second.authority()), number);
    assert_ne!(first, second, "{url}: two runs gave one id");
    assert!(second > first, "{url}: {second} after {first}");
}

gdid_testkit::on_every_store!(async two_runs_differ("gdid_front_door"):
    example_on_sqlite, example_on_mariadb, example_on_postgres, example_on_mongodb);

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

gdid_testkit::on_every_store!(async strategies("gdid_front_door"):
    strategies_on_sqlite, strategies_on_mariadb, strategies_on_postgres, strategies_on_mongodb);

/// A fence (as after a restore): every GDID record of the sequence moves to a new era while a
/// generator holds a block, and the ids after it sort after every id before; the one-at-a-time
/// counter is left as it is; skipping ranges is the SQL servers' alone.
async fn fenced(url: &str) {
    let store = Store::open(url).await.expect("open");
    let sequence = fresh("fenced");
    let running = store.block_generator("shop", &sequence).build().unwrap();
    let before: Vec<_> = [
        running.next_id().await.unwrap(),
        running.next_id().await.unwrap(),
    ]
    .into();
    let counter = store.one_at_a_time("shop", &sequence);
    let counted = counter.next_id().await.unwrap();
    let which = FenceScope::Sequence {
        scope: "shop",
        sequence: &sequence,
    };
    let fenced = store.fence(which).await.unwrap();
    assert_eq!(fenced.len(), 1, "{url}: {fenced:?}");
    assert!(
        u64::from(fenced[0].era) > fenced[0].from_era,
        "{url}: {fenced:?}"
    );
    // The running generator's block was below the fence: it goes on, and nothing repeats.
    let held = running.next_id().await.unwrap();
    let after = store
        .block_generator("shop", &sequence)
        .build()
        .unwrap()
        .next_id()
        .await
        .unwrap();
    assert_eq!(after.era(), fenced[0].era, "{url}");
    assert!(before.iter().chain([&held]).all(|id| *id < after), "{url}");
    assert_eq!(
        counter.next_id().await.unwrap(),
        counted + 1,
        "{url}: the counter is not fenced"
    );
    let skipped = store.skip_ranges(&sequence, 10).await;
    if url.starts_with("mongodb") {
        let refused = skipped.unwrap_err().to_string();
        assert!(
            refused.contains("its writes survive a failover"),
            "{url}: {refused}"
        );
    } else {
        assert_eq!(skipped.unwrap(), 0, "{url}: no range of the sequence");
    }
}

gdid_testkit::on_every_store!(async fenced("gdid_front_door"):
    fence_on_sqlite, fence_on_mariadb, fence_on_postgres, fence_on_mongodb);

/// 64 callers reserving blocks of one sequence at once from a store's authority (their writes
/// coalesced), beside a generator of the same sequence: every block has the size asked for, and
/// no id is in two blocks or also served by the generator. Of two blocks reserved at once, only
/// the later one's tail can be given back, after which the counter resumes at that tail.
async fn concurrent_blocks(url: &str) {
    let store = Store::open(url).await.expect("open");
    let authority = store.authority().expect("a numbered store");
    let sequence = fresh("together");
    let generator = store.block_generator("shop", &sequence).build().unwrap();
    let callers: Vec<_> = (1..=64u64)
        .map(|size| {
            let (authority, sequence) = (authority.clone(), sequence.clone());
            tokio::spawn(async move { authority.allocate_boxed("shop", &sequence, size).await })
        })
        .collect();
    let mut served = Vec::new();
    for _ in 0..200 {
        served.push(generator.next_id().await.unwrap());
    }
    let mut blocks = Vec::new();
    for (size, caller) in (1..).zip(callers) {
        let block = caller.await.unwrap().expect("a block");
        assert_eq!(block.len(), size, "{url}: {block}");
        blocks.push(block);
    }
    blocks.sort_by_key(|block| (block.era(), block.start()));
    for pair in blocks.windows(2) {
        assert!(
            pair[0].era() < pair[1].era() || pair[0].end() <= pair[1].start(),
            "{url}: {} and {} overlap",
            pair[0],
            pair[1]
        );
    }
    for id in &served {
        assert!(
            !blocks.iter().any(|block| block.contains(*id)),
            "{url}: {id} served twice"
        );
    }

    let (a, b) = tokio::join!(
        authority.allocate_boxed("shop", &sequence, 10),
        authority.allocate_boxed("shop", &sequence, 10)
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    let (earlier, later) = if a.start() < b.start() {
        (a, b)
    } else {
        (b, a)
    };
    let tail = |block: gdid::engine::Block| {
        gdid::engine::Block::new(block.era(), block.authority(), block.start() + 4, 6).unwrap()
    };
    let gave = authority
        .give_back_boxed("shop", &sequence, tail(earlier))
        .await;
    assert!(
        !gave.unwrap(),
        "{url}: a tail with a block after it went back"
    );
    let gave = authority
        .give_back_boxed("shop", &sequence, tail(later))
        .await;
    assert!(gave.unwrap(), "{url}: the last tail did not go back");
    let next = authority
        .allocate_boxed("shop", &sequence, 1)
        .await
        .unwrap();
    assert_eq!(
        next.start(),
        later.start() + 4,
        "{url}: {next} after {later}"
    );
}

gdid_testkit::on_every_store!(async concurrent_blocks("gdid_front_door"):
    concurrent_blocks_on_sqlite, concurrent_blocks_on_mariadb, concurrent_blocks_on_postgres,
    concurrent_blocks_on_mongodb);

/// A store opened unnumbered records no number, and is no authority: its counters and ranges
/// serve, its block generator has no authority and a GDID floor is refused; the store, fresh,
/// later takes the number asked for (7: the databases are kept between runs, so one number for
/// all), and its one-at-a-time counter goes on from where it was.
async fn counters_record_no_number(url: &str) {
    let sequence = fresh("unnumbered");
    let unnumbered = Store::options().unnumbered().open(url).await;
    let unnumbered = unnumbered.expect("unnumbered");
    assert_eq!(unnumbered.authority_number(), None, "{url}");
    assert!(unnumbered.authority().is_none(), "{url}");
    let counter = unnumbered.one_at_a_time("shop", &sequence);
    assert_eq!(counter.next_id().await.unwrap(), 1, "{url}");
    let layout = RangeLayout::new(1_000_000, 1_000_000, 4).expect("layout");
    let sharded = unnumbered
        .sharded(&sequence, layout, Pick::RoundRobin)
        .await;
    sharded.expect("sharded").next_id().await.unwrap();
    let no_authority = unnumbered.block_generator("shop", &sequence).build();
    let refused = no_authority.expect_err("no authority");
    assert!(
        refused.to_string().contains("no authority"),
        "{url}: {refused}"
    );
    let floor = gdid::engine::CounterState { era: 0, next: 10 };
    match unnumbered.raise_floor("shop", &sequence, floor).await {
        Err(StoreError::Unnumbered { url: named, .. }) => assert_eq!(named, gdid::redact(url)),
        other => panic!("{url}: a GDID floor of an unnumbered store: {other:?}"),
    }
    unnumbered
        .ready()
        .await
        .expect("an unnumbered store is ready");

    let store = Store::options()
        .authority(7)
        .open(url)
        .await
        .expect("no number was recorded");
    assert_eq!(store.authority_number(), Some(7), "{url}");
    let counter = store.one_at_a_time("shop", &sequence);
    assert_eq!(counter.next_id().await.unwrap(), 2, "{url}: one counter");
}

gdid_testkit::on_every_store!(async counters_record_no_number("gdid_front_door_unnumbered"):
    unnumbered_counters_on_sqlite, unnumbered_counters_on_mariadb,
    unnumbered_counters_on_postgres, unnumbered_counters_on_mongodb);

#[tokio::test]
async fn unnumbered_counters_on_memory_and_sharded_is_unsupported() {
    let options = Store::options().unnumbered();
    let store = options.open("memory:unnumbered").await.unwrap();
    let counter = store.one_at_a_time("shop", "orders");
    assert_eq!(counter.next_id().await.unwrap(), 1);
    let layout = RangeLayout::new(1_000_000, 1_000_000, 4).expect("layout");
    let sharded = store.sharded("orders", layout, Pick::RoundRobin);
    unsupported(sharded.await, "ranges");
    match options.clone().authority(3).open("memory:").await {
        Err(StoreError::Unnumbered { url, .. }) => assert_eq!(url, "memory:"),
        other => panic!("a number asked of an unnumbered store: {other:?}"),
    }
    let both = options
        .authorities(&[1, 2])
        .open_all(&["memory:", "memory:"])
        .await;
    assert!(
        matches!(both, Err(StoreError::Unnumbered { .. })),
        "{both:?}"
    );
    let store = Store::options()
        .authority(4)
        .open("memory:unnumbered")
        .await
        .unwrap();
    assert_eq!(
        store
            .one_at_a_time("shop", "orders")
            .next_id()
            .await
            .unwrap(),
        2
    );
}

/// Every error has its kind: a URL to fix is a configuration error, even one only the driver
/// refuses; a server that does not answer is unavailable.
#[tokio::test]
async fn store_errors_have_their_kind() {
    use gdid::engine::ErrorKind;

    #[allow(unused_mut)] // the store features add theirs
    let mut urls = vec![("redis://127.0.0.1", ErrorKind::Config)];
    #[cfg(feature = "sqlite")]
    urls.push(("sqlite:", ErrorKind::Config));
    #[cfg(feature = "postgres")]
    urls.extend([
        (
            "postgres://u:hunter2@127.0.0.1:notaport/db",
            ErrorKind::Config,
        ),
        (
            "postgres://u:hunter2@127.0.0.1:1/db",
            ErrorKind::Unavailable,
        ),
    ]);
    #[cfg(feature = "mysql")]
    urls.push((
        "mysql://u:hunter2@127.0.0.1:3306/db?sslmode=bogus",
        ErrorKind::Config,
    ));
    #[cfg(feature = "mongodb")]
    urls.extend([
        ("mongodb://u:hunter2@127.0.0.1:99999/", ErrorKind::Config),
        (
            "mongodb://u:hunter2@127.0.0.1:1/?serverSelectionTimeoutMS=200",
            ErrorKind::Unavailable,
        ),
    ]);
    for (url, kind) in urls {
        let refused = Store::open(url).await.unwrap_err();
        assert_eq!(refused.kind(), kind, "{url}: {refused}");
        assert!(
            !everything_said(&refused).contains("hunter2"),
            "{refused:?}"
        );
    }
}

/// The error of opening `url`, whose server does not answer: a connect error that never says
/// the password `hunter2`. Everything it says.
#[cfg(any(feature = "mysql", feature = "postgres", feature = "mongodb"))]
async fn connect_error(url: &str) -> String {
    let error = Store::open(url).await.unwrap_err();
    assert!(matches!(error, StoreError::Connect { .. }), "{error:?}");
    let said = everything_said(&error);
    assert!(!said.contains("hunter2"), "{said}");
    said
}

/// The error of asking a store for what it does not keep (`what`): `Unsupported`.
fn unsupported<T>(asked: Result<T, StoreError>, what: &str) -> StoreError {
    let Err(refused) = asked else {
        panic!("a memory store kept {what}");
    };
    assert!(
        matches!(refused, StoreError::Unsupported { .. }),
        "{refused:?}"
    );
    refused
}

/// The conflict of authority numbers `error` reports, if it is one.
#[cfg(feature = "sqlite")]
fn number_conflict(error: &StoreError) -> Option<&gdid::engine::NumberConflict> {
    match error {
        StoreError::Numbers {
            source: gdid::AuthorityError::Number(conflict),
            ..
        } => Some(conflict),
        _ => None,
    }
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
        "ftp://u:hunter2@h",
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
    // An authority server takes its token in a header, never in the URL (feature `http`).
    let error = Store::open("http://u:hunter2@h").await.unwrap_err();
    assert!(
        matches!(
            error,
            StoreError::InvalidUrl { .. } | StoreError::FeatureDisabled { .. }
        ),
        "{error:?}"
    );
    assert!(!everything_said(&error).contains("hunter2"), "{error:?}");
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
    let said = connect_error("mysql://root:hunter2@127.0.0.1:1/test").await;
    assert!(said.contains("127.0.0.1:1"), "the store is named: {said}");
}

#[cfg(feature = "postgres")]
#[tokio::test]
async fn an_unreachable_postgres_server_is_a_connect_error_without_its_password() {
    connect_error("postgres://u:hunter2@127.0.0.1:1/test?password=hunter2").await;
}

#[cfg(feature = "mongodb")]
#[tokio::test]
async fn an_unreachable_mongodb_server_is_a_connect_error_without_its_password() {
    connect_error("mongodb://u:hunter2@127.0.0.1:1/gdid?serverSelectionTimeoutMS=200").await;
    // A malformed URL, which the driver refuses: a connect error too.
    connect_error("mongodb://u:hunter2@/").await;
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
    let named = Store::open(&gdid_testkit::mongodb_database(&uri, "gdid_front_door"))
        .await
        .expect("named");
    let by_default = Store::options()
        .default_mongodb_database("gdid_front_door")
        .open(&uri)
        .await
        .expect("by default");
    assert_eq!(named.authority_number(), by_default.authority_number());
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

/// `authority(number)` on the store of `url` (which records `number`, or is fresh): the store is
/// that authority and its ids carry it; reopened without a number it stays so; asked for
/// another number it is refused with the typed conflict, naming the store and no password.
async fn an_asked_number_is_recorded_and_never_contradicted(
    url: &str,
    options: impl Fn() -> gdid::OpenOptions,
    number: u8,
) {
    use gdid::engine::NumberConflict;

    let store = options().authority(number).open(url).await.expect("open");
    assert_eq!(store.authority_number(), Some(number), "{url}");
    let orders = store
        .block_generator("shop", &fresh("asked"))
        .build()
        .unwrap();
    assert_eq!(orders.next_id().await.unwrap().authority(), number, "{url}");

    let again = options().open(url).await.expect("reopen");
    assert_eq!(
        again.authority_number(),
        Some(number),
        "{url}: the record holds"
    );

    let other = (number + 1) % 16;
    let refused = options().authority(other).open(url).await.unwrap_err();
    match &refused {
        StoreError::Authority {
            source:
                gdid::AuthorityError::Number(NumberConflict::Recorded {
                    recorded, asked, ..
                }),
            ..
        } => assert_eq!((*recorded, *asked), (number, other), "{url}"),
        other => panic!("{url}: {other:?}"),
    }
    assert!(
        !everything_said(&refused).contains("hunter2"),
        "{refused:?}"
    );

    let too_big = options().authority(16).open(url).await.unwrap_err();
    assert!(
        matches!(too_big, StoreError::AuthorityNumber { number: 16, .. }),
        "{too_big:?}"
    );
}

/// Authority 9 asked for on the store of `url`: one database per number on the servers, so that
/// what it records stays true across runs.
async fn asked_nine(url: &str) {
    an_asked_number_is_recorded_and_never_contradicted(url, Store::options, 9).await;
}

gdid_testkit::on_every_store!(async asked_nine("gdid_front_door_asked9"):
    an_asked_number_on_sqlite, an_asked_number_on_mariadb, an_asked_number_on_postgres,
    an_asked_number_on_mongodb);

/// On MongoDB each counter collection is a store: a fresh one takes the number asked for, and
/// the default collection is not touched.
#[cfg(feature = "mongodb")]
#[tokio::test]
async fn an_asked_number_on_mongodb_in_a_counter_collection_of_its_own() {
    let Some(uri) = server("GDID_MONGODB_URI") else {
        return;
    };
    let url = gdid_testkit::mongodb_database(&uri, "gdid_front_door");
    let collection = fresh("counters");
    let options = || Store::options().mongodb_collection(&collection);
    an_asked_number_is_recorded_and_never_contradicted(&url, options, 12).await;
    // Another collection of the same database is another store, with its own number.
    let other = Store::options()
        .mongodb_collection(&fresh("counters"))
        .authority(4)
        .open(&url)
        .await
        .expect("another collection");
    assert_eq!(other.authority_number(), Some(4));
}

/// `memory:` stores: each unnamed one is fresh, one name is one store within the process, and
/// what needs a database is refused with a typed error.
#[tokio::test]
async fn memory_stores_are_in_process_and_named_ones_are_shared() {
    for url in ["memory:", "memory"] {
        let store = Store::open(url).await.expect("open");
        let ids = store.block_generator("shop", "orders").build().unwrap();
        assert_eq!(ids.next_id().await.unwrap().to_string(), "0:1:1", "{url}");
    }
    let name = format!("memory:{}", fresh("named"));
    let first = Store::open(&name).await.unwrap();
    let a = first.block_generator("shop", "orders").build().unwrap();
    let a = a.next_id().await.unwrap();
    let again = Store::open(&name).await.unwrap();
    let b = again.block_generator("shop", "orders").build().unwrap();
    let b = b.next_id().await.unwrap();
    assert!(b > a, "{b} after {a}: one name, one store");
    let counter = again.one_at_a_time("shop", "invoices");
    assert_eq!(counter.next_id().await.unwrap(), 1);
    assert_eq!(
        first
            .one_at_a_time("shop", "invoices")
            .next_id()
            .await
            .unwrap(),
        2
    );

    let layout = RangeLayout::new(1_000_000, 1_000_000, 4).unwrap();
    let refused = unsupported(first.sharded("s", layout, Pick::RoundRobin).await, "ranges");
    assert!(
        refused.to_string().contains("needs a database store"),
        "{refused}"
    );
    unsupported(first.window_generator("s", 10), "windows");
    let asked = Store::options().authority(9).open("memory:").await.unwrap();
    assert_eq!(asked.authority_number(), Some(9));
}

/// `open_all`: a fresh store listed in front of a numbered one takes a number of its own, the
/// numbered one keeps its own in any order, a number its record contradicts is the typed
/// conflict, and one store under two spellings cannot be two authorities.
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn open_all_gives_each_store_its_own_number() {
    use gdid::engine::NumberConflict;

    let a = sqlite_url("gdid_open_all_a");
    let b = sqlite_url("gdid_open_all_b");
    let alone = Store::open_all(&[&a]).await.unwrap();
    assert_eq!(alone.numbers(), [Some(1)]);
    let b_in_front = Store::open_all(&[&b, &a]).await.unwrap();
    assert_eq!(b_in_front.numbers(), [Some(2), Some(1)]);
    let a_in_front = Store::open_all(&[&a, &b]).await.unwrap();
    assert_eq!(a_in_front.numbers(), [Some(1), Some(2)]);
    let ids = a_in_front.block_generator("shop", "o").build().unwrap();
    assert_eq!(ids.next_id().await.unwrap().authority(), 1);

    let refused = Store::options()
        .authorities(&[3, 2])
        .open_all(&[&a, &b])
        .await
        .unwrap_err();
    assert!(
        matches!(
            number_conflict(&refused),
            Some(NumberConflict::Recorded { .. })
        ),
        "{refused:?}"
    );
    // One number for two stores, by either option, is refused, never dropped.
    for options in [
        Store::options().authorities(&[1]),
        Store::options().authority(3),
    ] {
        let refused = options.open_all(&[&a, &b]).await.unwrap_err();
        assert!(
            matches!(
                refused,
                StoreError::AuthorityCount {
                    numbers: 1,
                    stores: 2
                }
            ),
            "{refused:?}"
        );
    }
    let (folder, file) = a.rsplit_once('/').expect("a path");
    let twice = format!("{folder}/./{file}");
    let refused = Store::open_all(&[&a, &twice]).await.unwrap_err();
    assert!(matches!(refused, StoreError::Numbers { .. }), "{refused:?}");
    assert!(matches!(
        Store::open_all::<&str>(&[]).await.unwrap_err(),
        StoreError::NoStores
    ));
}

/// Fresh stores are numbered in the order of their URLs, not the order given: processes that
/// list them in other orders agree (the failover order stays the one given).
#[tokio::test]
async fn open_all_numbers_fresh_stores_in_the_order_of_their_urls() {
    let stores = Store::open_all(&["memory:order_b", "memory:order_a"])
        .await
        .unwrap();
    assert_eq!(stores.numbers(), [Some(2), Some(1)]);
    let ids = stores.block_generator("shop", "orders").build().unwrap();
    assert_eq!(ids.next_id().await.unwrap().authority(), 2, "b first");
    let again = Store::open_all(&["memory:order_a", "memory:order_b"])
        .await
        .unwrap();
    assert_eq!(again.numbers(), [Some(1), Some(2)]);
}

/// A failover store that is down when `open_all` runs: it serves only with its number given,
/// and until then a fresh store listed with it gets no number.
#[cfg(all(feature = "sqlite", feature = "mysql"))]
#[tokio::test]
async fn open_all_with_a_store_that_is_down() {
    use gdid::engine::NumberConflict;

    let dead = "mysql://root:hunter2@127.0.0.1:1/test";
    let fresh_store = sqlite_url("gdid_open_all_down");
    let refused = Store::open_all(&[dead, &fresh_store]).await.unwrap_err();
    assert!(
        matches!(
            number_conflict(&refused),
            Some(NumberConflict::Unseen { .. })
        ),
        "{refused:?}"
    );
    assert!(
        !everything_said(&refused).contains("hunter2"),
        "{refused:?}"
    );

    let served = Store::options()
        .authorities(&[1, 2])
        .open_all(&[dead, &fresh_store])
        .await
        .unwrap();
    assert_eq!(served.numbers(), [Some(1), Some(2)]);
    let ids = served.block_generator("shop", "o").build().unwrap();
    assert_eq!(ids.next_id().await.unwrap().authority(), 2, "failed over");

    // Now the fresh store has its number: the dead one is left out.
    let left = Store::open_all(&[dead, &fresh_store]).await.unwrap();
    assert_eq!(left.numbers(), [None, Some(2)]);
    assert_eq!(left.left_out(), ["mysql://root:***@127.0.0.1:1/test"]);
}

/// A window agent over two SQLite shards, opened unnumbered, opens windows a window generator
/// then issues from; no number is recorded; a memory store is no shard.
#[cfg(feature = "sqlite")]
#[tokio::test]
async fn a_window_agent_supplies_the_window_generator() {
    let shards = [sqlite_url("gdid_windows_a"), sqlite_url("gdid_windows_b")];
    let options = Store::options().unnumbered();
    let stores = options.open_all(&shards).await.expect("open");
    assert_eq!(stores.numbers(), [None, None]);
    let agent = stores.window_agent(100, 1).await.expect("agent");
    let report = agent.run_once(&["orders"]).await.expect("round");
    assert_eq!(report.created.len(), 2);
    let ids = stores.window_generator("orders", 10).expect("generator");
    let (a, b) = (ids.next_id().await.unwrap(), ids.next_id().await.unwrap());
    assert_ne!(a, b);
    let memory = options.open_all(&["memory:"]).await.unwrap();
    unsupported(memory.window_agent(100, 1).await, "windows");
    let refused = stores.window_agent(0, 1).await.unwrap_err();
    assert!(matches!(refused, StoreError::Agent(_)), "{refused:?}");
    for shard in &shards {
        let numbered = Store::options().authority(5).open(shard).await;
        let numbered = numbered.expect("no number was recorded, so any can be");
        assert_eq!(numbered.authority_number(), Some(5), "{shard}");
    }
}

/// Random ids inserted with retry into a table of the store: a full range ends with every id
/// tried, each refused as this store's duplicate key.
#[cfg(all(feature = "sqlite", feature = "random"))]
#[tokio::test]
async fn random_ids_are_inserted_with_retry_until_the_range_is_full() {
    use gdid::random::{IdRange, RandomIdGenerator, RetryError};

    let url = sqlite_url("gdid_random_retry");
    let store = Store::open(&url).await.unwrap();
    let pool = sqlx::SqlitePool::connect(&url).await.unwrap();
    sqlx::query("CREATE TABLE accounts (id INTEGER PRIMARY KEY)")
        .execute(&pool)
        .await
        .unwrap();
    let ids = RandomIdGenerator::new(IdRange::new(0..3).unwrap());
    let insert = |id: u64| {
        sqlx::query("INSERT INTO accounts (id) VALUES (?)")
            .bind(i64::try_from(id).unwrap())
            .execute(&pool)
    };
    let mut stored = Vec::new();
    for _ in 0..3 {
        stored.push(
            store
                .insert_with_retry(&ids, 1_000, insert)
                .await
                .unwrap()
                .0,
        );
    }
    stored.sort_unstable();
    assert_eq!(stored, [0, 1, 2]);
    let full = store.insert_with_retry(&ids, 10, insert).await.unwrap_err();
    assert!(
        matches!(&full, RetryError::Exhausted { tried } if tried.len() == 10),
        "{full:?}"
    );
    let memory = Store::open("memory:").await.unwrap();
    let taken = sqlx::query("INSERT INTO accounts (id) VALUES (0)")
        .execute(&pool)
        .await
        .unwrap_err();
    assert!(store.is_duplicate_key(&taken));
    assert!(!memory.is_duplicate_key(&taken));
}

/// `Store::check` reads every setting of its server's kind through the store itself: the
/// names it must judge are there, each with a value and a meaning. (Whether the machine's
/// servers are set up safely is theirs to say; every verdict is tested on private servers
/// started with its setting, in gdid-faults' `test_check`.) A SQLite file on disk is safe, and
/// so are MongoDB's blocks, written with `w: "majority", j: true` whatever the server's default.
async fn checked(url: &str) {
    let store = Store::open(url).await.expect("open");
    let report = store.check().await.expect("check");
    let expected: &[&str] = match url.split(':').next() {
        Some("sqlite") => &["file", "journal_mode", "synchronous"],
        Some("mysql") => &["innodb_flush_log_at_trx_commit", "read_only", "replication"],
        Some("postgres") => &[
            "fsync",
            "full_page_writes",
            "synchronous_commit",
            "synchronous_standby_names",
            "standbys",
        ],
        _ => &["write concern"],
    };
    for name in expected {
        let setting = report
            .settings
            .iter()
            .find(|setting| setting.name == *name)
            .unwrap_or_else(|| panic!("{url}: no {name} in\n{report}"));
        assert!(
            !setting.value.is_empty() && !setting.meaning.is_empty(),
            "{url}: {setting:?}"
        );
    }
    if url.starts_with("sqlite") || url.starts_with("mongodb") {
        assert!(report.is_safe(), "{url}:\n{report}");
    }
    let again = Store::options().check(url).await.expect("check by URL");
    assert_eq!(again.settings.len(), report.settings.len(), "{url}");
}

gdid_testkit::on_every_store!(async checked("gdid_front_door"):
    check_on_sqlite, check_on_mariadb, check_on_postgres, check_on_mongodb);
