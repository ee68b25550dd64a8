//! The PostgreSQL extension (`CREATE EXTENSION gdid`, crate gdid-postgres) on private servers:
//! ids issued by a column default, a rolled-back insert, many sessions beside a Rust generator
//! on one sequence, a failover to a lagging standby, a store that refuses or never answers, the
//! index on 100,000 rows, and the type read and written by sqlx and tokio-postgres.
//!
//! Then, on servers authenticating as a stock installation does (`local all postgres peer`, a
//! password for everyone else: [`PostgresReplicas::start_stock`]) and called by roles that are
//! not superusers: who `gdid_next`'s own connection is (never the caller, never anything the
//! caller can shadow), who may call it, the DBA's set-up of docs/interoperability.md, authority
//! numbers, and the reservation's flush.
//!
//! The extension must be installed in the PostgreSQL the private servers run
//! (`scripts/pg-extension install`); without it a test is skipped, and fails under `CI=true`.
//! `scripts/pg-extension test` installs it, then runs these. Build the command first (`cargo
//! build -p gdid-cli`): the duplicates are judged by `gdid verify`.

use std::collections::BTreeSet;
use std::process::Command;

use gdid::{Gdid, PgGdid, Store};
use gdid_faults::server::PostgresReplicas;
use gdid_faults::{gdid_binary, planted};
use sqlx::{AssertSqlSafe, Connection, Executor, PgConnection};

/// A private PostgreSQL primary (and `standbys` standbys) with the extension created in its
/// `postgres` database; `None`, said skipped, when PostgreSQL or the extension is not installed here
/// (a failure with `CI=true`).
fn server(standbys: usize) -> Option<PostgresReplicas> {
    let mut replicas = with_extension(PostgresReplicas::start)?;
    // The role gdid_next's connection logs in as (the servers trust every local role).
    replicas
        .query(
            0,
            "CREATE ROLE gdid_issuer LOGIN; GRANT CREATE, USAGE ON SCHEMA public TO gdid_issuer",
        )
        .unwrap_or_else(|e| panic!("the issuer's role: {e}"));
    for _ in 0..standbys {
        replicas
            .add_standby(0)
            .unwrap_or_else(|e| panic!("adding a standby: {e}"));
    }
    Some(replicas)
}

/// A private primary started by `start`, with the extension created in its `postgres`
/// database; `None`, said skipped, when PostgreSQL or the extension is not installed here (a
/// failure with `CI=true`).
fn with_extension(
    start: impl FnOnce() -> Result<PostgresReplicas, String>,
) -> Option<PostgresReplicas> {
    if let Err(why) = PostgresReplicas::installed() {
        gdid_testkit::unavailable("PostgreSQL", &why);
        return None;
    }
    let replicas = start().unwrap_or_else(|e| panic!("starting: {e}"));
    if let Err(why) = replicas.query(0, "CREATE EXTENSION gdid") {
        gdid_testkit::unavailable(
            "PostgreSQL",
            &format!("the gdid extension is not installed (scripts/pg-extension install): {why}"),
        );
        return None;
    }
    gdid_testkit::ran("PostgreSQL");
    Some(replicas)
}

/// [`server`], with a table of the test's made on the primary by `create_table`.
fn server_with(standbys: usize, create_table: &str) -> Option<PostgresReplicas> {
    let server = server(standbys)?;
    server
        .query(0, create_table)
        .unwrap_or_else(|e| panic!("{create_table}: {e}"));
    Some(server)
}

/// The URL of a Rust store sharing the extension's tables on `url`'s server: `gdid_issuer` made
/// and owns them, so the store is told to trust that role (`owner=`); a store trusts no other
/// owner but a superuser, the database's owner and its own role.
fn beside_the_extension(url: &str) -> String {
    format!("{url}?owner=gdid_issuer")
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

async fn connect(url: &str) -> PgConnection {
    PgConnection::connect(url)
        .await
        .unwrap_or_else(|e| panic!("connecting to {url}: {e}"))
}

/// Sets the session's blocks to `cache` counters each, whatever its rate: `gdid.cache` (the
/// smallest block) and `gdid.cache_max` (the largest) both.
async fn set_cache(session: &mut PgConnection, cache: u32) {
    sqlx::query(
        "SELECT set_config('gdid.cache', $1, false), set_config('gdid.cache_max', $1, false)",
    )
    .bind(cache.to_string())
    .execute(session)
    .await
    .unwrap();
}

/// Inserts `rows` rows into `table` in one session, each with its id from the column default,
/// and returns the ids.
async fn insert(session: &mut PgConnection, table: &str, rows: usize) -> Vec<Gdid> {
    let mut ids = Vec::with_capacity(rows);
    for _ in 0..rows {
        let id: PgGdid = sqlx::query_scalar(AssertSqlSafe(format!(
            "INSERT INTO {table} DEFAULT VALUES RETURNING id"
        )))
        .fetch_one(&mut *session)
        .await
        .unwrap();
        ids.push(id.0);
    }
    ids
}

/// `gdid verify`'s verdict on `writers`' ids (each list a writer): its output, and whether it
/// found every id once.
fn verify(name: &str, writers: &[Vec<Gdid>]) -> (bool, String) {
    let folder =
        std::env::temp_dir().join(format!("gdid-pg-extension-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let files: Vec<_> = writers
        .iter()
        .enumerate()
        .map(|(i, ids)| {
            let file = folder.join(format!("writer-{i}.txt"));
            let lines: Vec<String> = ids.iter().map(ToString::to_string).collect();
            std::fs::write(&file, lines.join("\n") + "\n").unwrap();
            file
        })
        .collect();
    let binary = gdid_binary().unwrap_or_else(|e| panic!("{e}"));
    let output = Command::new(binary)
        .arg("verify")
        .args(&files)
        .output()
        .unwrap();
    std::fs::remove_dir_all(&folder).unwrap();
    let text = String::from_utf8_lossy(&output.stdout).into_owned()
        + &String::from_utf8_lossy(&output.stderr);
    (output.status.success(), text)
}

/// Every id of `writers`, checked to be there once: by `gdid verify`, and here.
fn assert_no_id_twice(name: &str, writers: &[Vec<Gdid>]) {
    let all: Vec<Gdid> = writers.iter().flatten().copied().collect();
    let distinct: BTreeSet<Gdid> = all.iter().copied().collect();
    let (verified, report) = verify(name, writers);
    assert!(verified, "gdid verify: {report}");
    assert_eq!(
        distinct.len(),
        all.len(),
        "{} ids issued twice",
        all.len() - distinct.len()
    );
}

#[test]
fn a_column_default_issues_ids_and_select_prints_them() {
    let Some(server) = server_with(
        0,
        "CREATE TABLE t (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 't'), item text)",
    ) else {
        return;
    };
    server
        .query(0, "INSERT INTO t (item) VALUES ('a'), ('b'), ('c')")
        .unwrap();
    assert_eq!(
        server.query(0, "SELECT id FROM t ORDER BY id").unwrap(),
        "0:1:1\n0:1:2\n0:1:3"
    );
    // The counter row and the authority record are those `gdid::Store::open` uses.
    runtime().block_on(async {
        let store = Store::open(&beside_the_extension(&server.url(0)))
            .await
            .unwrap();
        assert_eq!(store.authority_number(), Some(1));
        let ids = store.block_generator("shop", "t").build().unwrap();
        let id = gdid::IdGenerator::next_id(&ids).await.unwrap();
        assert!(
            id > Gdid::from_parts(0, 1, 3).unwrap(),
            "{id} after the column's ids"
        );
    });
}

/// A rolled-back insert keeps the counter moved past its block: later sessions and a Rust
/// generator never get its ids. With `gdid.cache = 1`, a reservation in the caller's transaction
/// would hand the same id to the next session.
#[test]
fn a_rolled_back_insert_never_leads_to_a_repeated_id() {
    let Some(server) = server_with(
        0,
        "CREATE TABLE r (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 'r'))",
    ) else {
        return;
    };
    let url = server.url(0);
    runtime().block_on(async {
        let mut writers = Vec::new();
        for cache in [1, 100] {
            let mut session = connect(&url).await;
            set_cache(&mut session, cache).await;
            session.execute("BEGIN").await.unwrap();
            let rolled_back = insert(&mut session, "r", 3).await;
            session.execute("ROLLBACK").await.unwrap();
            assert_eq!(
                sqlx::query_scalar::<_, i64>("SELECT count(*) FROM r")
                    .fetch_one(&mut session)
                    .await
                    .unwrap(),
                0
            );
            writers.push(rolled_back);
            // The same session goes on after its block, other sessions after the counter.
            writers.push(insert(&mut session, "r", 2).await);
            for _ in 0..3 {
                let mut other = connect(&url).await;
                set_cache(&mut other, cache).await;
                writers.push(insert(&mut other, "r", 2).await);
            }
            let store = Store::open(&beside_the_extension(&url)).await.unwrap();
            let generator = store.block_generator("shop", "r").build().unwrap();
            let mut rust = Vec::new();
            for _ in 0..5 {
                rust.push(gdid::IdGenerator::next_id(&generator).await.unwrap());
            }
            writers.push(rust);
            sqlx::query("DELETE FROM r")
                .execute(&mut session)
                .await
                .unwrap();
        }
        assert_no_id_twice("rollback", &writers);
    });
}

/// Eight sessions insert through the column default while a Rust generator issues ids of the
/// same sequence: every id once, by `gdid verify`.
#[test]
fn many_sessions_and_a_rust_generator_share_a_sequence_without_a_duplicate() {
    let Some(server) = server_with(
        0,
        "CREATE TABLE c (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 'c'))",
    ) else {
        return;
    };
    let url = server.url(0);
    const SESSIONS: usize = 8;
    const ROWS: usize = 400;
    let writers = runtime().block_on(async {
        // The extension's role makes the gdid tables before anything races: tables the Rust
        // side (a superuser here) made first would not be `gdid_issuer`'s to use, and a service
        // sharing the sequences opens the tables the extension made (docs/interoperability.md,
        // "Setting up gdid_next"). Which side reached them first once decided this test.
        sqlx::query("SELECT gdid_next('shop', 'c')")
            .execute(&mut connect(&url).await)
            .await
            .unwrap();
        let mut tasks = Vec::new();
        for i in 0..SESSIONS {
            let url = url.clone();
            tasks.push(tokio::spawn(async move {
                let mut session = connect(&url).await;
                // Small blocks: many reservations racing each other and the generator.
                let cache = [1, 3, 10, 50][i % 4];
                set_cache(&mut session, cache).await;
                insert(&mut session, "c", ROWS).await
            }));
        }
        let rust = tokio::spawn(async move {
            let store = Store::open(&beside_the_extension(&url)).await.unwrap();
            let generator = store.block_generator("shop", "c").build().unwrap();
            let mut ids = Vec::new();
            for _ in 0..4_000 {
                ids.push(gdid::IdGenerator::next_id(&generator).await.unwrap());
                if ids.len() % 100 == 0 {
                    tokio::task::yield_now().await;
                }
            }
            ids
        });
        let mut writers = Vec::new();
        for task in tasks {
            writers.push(task.await.unwrap());
        }
        writers.push(rust.await.unwrap());
        writers
    });
    assert_eq!(
        server.query(0, "SELECT count(*) FROM c").unwrap(),
        (SESSIONS * ROWS).to_string()
    );
    assert_no_id_twice("concurrency", &writers);
}

/// The primary issues ids through the column default; a standby stops replaying (it lags), the
/// primary issues more and goes away, the standby is promoted: its ids are new, and sort after
/// all.
#[test]
fn after_a_failover_to_a_lagging_standby_the_column_default_repeats_nothing() {
    let Some(mut server) = server_with(
        1,
        "CREATE TABLE f (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 'f'))",
    ) else {
        return;
    };
    let runtime = runtime();
    let mut writers = Vec::new();
    writers.push(
        runtime.block_on(async { insert(&mut connect(&server.url(0)).await, "f", 30).await }),
    );
    server.wait_caught_up(1).unwrap();
    // A standby cannot issue: its reservation cannot write.
    let on_standby = runtime.block_on(async {
        failure(
            &mut connect(&server.url(1)).await,
            "SELECT gdid_next('shop', 'f')",
        )
        .await
    });
    assert!(
        on_standby.contains("read-only standby") && on_standby.contains("on the primary"),
        "{on_standby}"
    );
    server.stop(1).unwrap();
    // The standby missed these: its counter row is behind them.
    writers.push(
        runtime.block_on(async { insert(&mut connect(&server.url(0)).await, "f", 120).await }),
    );
    server.stop(0).unwrap();
    server.start_again(1).unwrap();
    server.promote(1).unwrap();
    let after =
        runtime.block_on(async { insert(&mut connect(&server.url(1)).await, "f", 30).await });
    let before_max = writers.iter().flatten().max().copied().unwrap();
    assert!(
        after.iter().all(|id| *id > before_max),
        "ids after the failover sort after {before_max}: {after:?}"
    );
    writers.push(after);
    assert_no_id_twice("failover", &writers);
}

/// On 100,000 rows under default settings the planner uses the primary key's index for an
/// equality, a range and the last rows in order.
#[test]
fn the_index_serves_equality_and_order_on_100000_rows() {
    let Some(server) = server(0) else { return };
    let plan = |query: &str| {
        server
            .query(0, &format!("EXPLAIN (COSTS OFF) {query}"))
            .unwrap()
    };
    server
        .query(
            0,
            "CREATE TABLE big (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 'big'), item text); \
             INSERT INTO big (item) SELECT 'item ' || n FROM generate_series(1, 100000) AS n; \
             ANALYZE big",
        )
        .unwrap();
    assert_eq!(
        server
            .query(0, "SELECT count(DISTINCT id) FROM big")
            .unwrap(),
        "100000"
    );
    let equal = plan("SELECT * FROM big WHERE id = '0:1:5'");
    assert!(equal.contains("Index Scan using big_pkey"), "{equal}");
    let range = plan("SELECT * FROM big WHERE id BETWEEN '0:1:100' AND '0:1:200'");
    assert!(range.contains("Index Scan using big_pkey"), "{range}");
    assert_eq!(
        server
            .query(
                0,
                "SELECT count(*) FROM big WHERE id BETWEEN '0:1:100' AND '0:1:200'"
            )
            .unwrap(),
        "101"
    );
    let last = plan("SELECT * FROM big ORDER BY id DESC LIMIT 5");
    assert!(
        last.contains("Index Scan Backward using big_pkey"),
        "{last}"
    );
    assert_eq!(
        server
            .query(0, "SELECT item FROM big WHERE id = '0:1:5'")
            .unwrap(),
        "item 5"
    );
    assert_eq!(
        server
            .query(0, "SELECT id FROM big ORDER BY id DESC LIMIT 2")
            .unwrap(),
        "0:1:100000\n0:1:99999"
    );
}

/// sqlx (binary protocol) and tokio-postgres read and write the type through `PgGdid`; a plain
/// `Gdid` stays `BYTEA`, and each is refused for the other's column.
#[test]
fn sqlx_and_tokio_postgres_read_and_write_the_type() {
    let Some(server) = server_with(
        0,
        "CREATE TABLE w (id gdid PRIMARY KEY, old bytea, maybe gdid)",
    ) else {
        return;
    };
    let url = server.url(0);
    let id = Gdid::from_parts(1293, 3, 57).unwrap();
    runtime().block_on(async {
        let mut session = connect(&url).await;
        sqlx::query("INSERT INTO w VALUES ($1, $2, $3)")
            .bind(PgGdid(id))
            .bind(id)
            .bind(None::<PgGdid>)
            .execute(&mut session)
            .await
            .unwrap();
        let (read, old, maybe): (PgGdid, Gdid, Option<PgGdid>) =
            sqlx::query_as("SELECT id, old, maybe FROM w WHERE id = $1")
                .bind(PgGdid(id))
                .fetch_one(&mut session)
                .await
                .unwrap();
        assert_eq!((read.0, old, maybe), (id, id, None));
        assert_eq!(
            sqlx::query_scalar::<_, String>("SELECT id::text FROM w")
                .fetch_one(&mut session)
                .await
                .unwrap(),
            "1293:3:57"
        );
        let wrong = sqlx::query_scalar::<_, Gdid>("SELECT id FROM w")
            .fetch_one(&mut session)
            .await;
        assert!(wrong.is_err(), "a gdid column read as BYTEA: {wrong:?}");
        let wrong = sqlx::query_scalar::<_, PgGdid>("SELECT old FROM w")
            .fetch_one(&mut session)
            .await;
        assert!(wrong.is_err(), "a BYTEA column read as gdid: {wrong:?}");

        let (client, connection) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .unwrap();
        tokio::spawn(connection);
        let second = Gdid::from_parts(0, 1, 7).unwrap();
        client
            .execute(
                "INSERT INTO w (id, old) VALUES ($1, $2)",
                &[&PgGdid(second), &second],
            )
            .await
            .unwrap();
        let row = client
            .query_one("SELECT id, old FROM w WHERE id = $1", &[&PgGdid(second)])
            .await
            .unwrap();
        assert_eq!(
            (row.get::<_, PgGdid>(0).0, row.get::<_, Gdid>(1)),
            (second, second)
        );
        let order: Vec<Gdid> = client
            .query("SELECT id FROM w ORDER BY id", &[])
            .await
            .unwrap()
            .iter()
            .map(|row| row.get::<_, PgGdid>(0).0)
            .collect();
        assert_eq!(order, [second, id]);
        let refused = client
            .query_one("SELECT old FROM w WHERE id = $1", &[&second])
            .await;
        assert!(refused.is_err(), "a Gdid (BYTEA) bound to a gdid parameter");
        let bytea_as_gdid = row.try_get::<_, PgGdid>(1);
        assert!(bytea_as_gdid.is_err(), "a BYTEA column read as gdid");
    });
}

/// What the server says (its message, without the detail) when `session` calls `gdid_next`
/// once `gdid.store_url` is `store_url` in the server's configuration (`ALTER SYSTEM`, reloaded:
/// it is no session's setting) and the session has read it.
async fn next_with(session: &mut PgConnection, store_url: &str) -> String {
    // The library is not preloaded here: loaded first, so that ALTER SYSTEM knows the setting.
    for sql in [
        "LOAD 'gdid'".to_owned(),
        format!("ALTER SYSTEM SET gdid.store_url = '{store_url}'"),
        "SELECT pg_reload_conf()".to_owned(),
    ] {
        session.execute(AssertSqlSafe(sql)).await.unwrap();
    }
    reloaded(session, "gdid.store_url", store_url).await;
    failure(session, "SELECT gdid_next('shop', 'x')").await
}

/// Sets `setting` (`name = value`) in server 0's configuration (`ALTER SYSTEM`) and reloads it.
fn configure(server: &PostgresReplicas, setting: &str) {
    server
        .query(0, &format!("ALTER SYSTEM SET {setting}"))
        .unwrap();
    server.query(0, "SELECT pg_reload_conf()").unwrap();
}

/// Waits until `session` (a superuser's, or one that may read `setting`) has read `value` of
/// `setting` from the reloaded configuration.
async fn reloaded(session: &mut PgConnection, setting: &str, value: &str) {
    for _ in 0..200 {
        let now: String = sqlx::query_scalar("SELECT current_setting($1)")
            .bind(setting)
            .fetch_one(&mut *session)
            .await
            .unwrap();
        if now == value {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    panic!("{setting} is not {value:?} after a reload");
}

/// What the server says when `session` runs `sql`, which must fail: its message, without the
/// detail (a backtrace where the server's environment asks for one).
async fn failure(session: &mut PgConnection, sql: &'static str) -> String {
    let error = sqlx::query(sql).execute(session).await.unwrap_err();
    match error.as_database_error() {
        Some(error) => error.message().to_owned(),
        None => panic!("{error}"),
    }
}

/// A URL with a password is refused without its value; a store that refuses the connection is
/// an error naming it; one that accepts and never answers is waited on until the session's `statement_timeout`, not forever.
#[test]
fn a_store_that_refuses_or_never_answers_ends_the_statement_with_an_error() {
    let Some(server) = server(0) else { return };
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let refused_port = {
        let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        closed.local_addr().unwrap().port()
    };
    runtime().block_on(async {
        let mut session = connect(&server.url(0)).await;
        // A password in the URL: refused before any connection, without its value (members of
        // pg_read_all_settings read the setting; the password goes in the server's passfile).
        for url in [
            format!("postgres://app:secret@127.0.0.1:{refused_port}/x"),
            format!("postgres://app@127.0.0.1:{refused_port}/x?password=secret"),
        ] {
            let refused = next_with(&mut session, &url).await;
            assert!(
                refused.contains("gdid.store_url holds a password") && refused.contains("passfile"),
                "{refused}"
            );
            assert!(!refused.contains("secret"), "{refused}");
        }
        let refused = next_with(
            &mut session,
            &format!("postgres://app@127.0.0.1:{refused_port}/x"),
        )
        .await;
        assert!(
            refused.contains("could not connect to the store of gdid.store_url"),
            "{refused}"
        );
        // Within the back-off, at once and with the same reason.
        let again = failure(&mut session, "SELECT gdid_next('shop', 'x')").await;
        assert!(
            again.starts_with(&refused) && again.contains("tries again in"),
            "{again}"
        );

        sqlx::query("SET statement_timeout = '1s'")
            .execute(&mut session)
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let silent_error = next_with(
            &mut session,
            &format!("postgres://app@127.0.0.1:{silent_port}/x"),
        )
        .await;
        assert_eq!(silent_error, "canceling statement due to statement timeout");
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
    });
    drop(silent);
}

/// With the default settings (`gdid.cache` 100, `gdid.cache_max` 1,000,000) a session's blocks
/// grow with its rate: 100,000 ids in one statement take a handful of reservations (counted by a
/// trigger on the counters' table), where blocks of 100 took a thousand. When the session ends,
/// the unused end of its block goes back: the next session goes on from the last id issued, no
/// gap, and no id twice.
#[test]
fn blocks_grow_with_the_rate_and_their_unused_end_goes_back_when_the_session_ends() {
    let Some(server) = server(0) else { return };
    let url = server.url(0);
    let counter = |server: &PostgresReplicas| -> String {
        server
            .query(
                0,
                "SELECT next_counter FROM public.gdid_counters \
                 WHERE scope_name = 'grow' AND sequence_name = 'g'",
            )
            .unwrap()
            .trim()
            .to_owned()
    };
    runtime().block_on(async {
        let mut session = connect(&url).await;
        // The first id makes the tables; then every reservation after it is counted.
        let first: String = sqlx::query_scalar("SELECT gdid_next('grow', 'g')::text")
            .fetch_one(&mut session)
            .await
            .unwrap();
        assert_eq!(first, "0:1:1");
        server
            .query(
                0,
                "CREATE TABLE reservations (at timestamptz DEFAULT now()); \
                 CREATE FUNCTION count_reservation() RETURNS trigger SECURITY DEFINER \
                   LANGUAGE plpgsql AS $$ BEGIN INSERT INTO public.reservations DEFAULT VALUES; \
                   RETURN NEW; END $$; \
                 CREATE TRIGGER counted AFTER INSERT OR UPDATE ON public.gdid_counters \
                   FOR EACH ROW EXECUTE FUNCTION count_reservation()",
            )
            .unwrap();
        let count: i64 = sqlx::query_scalar(
            "SELECT count(gdid_next('grow', 'g')) FROM generate_series(1, 100000)",
        )
        .fetch_one(&mut session)
        .await
        .unwrap();
        assert_eq!(count, 100_000);
        let reservations = server
            .query(0, "SELECT count(*) FROM reservations")
            .unwrap();
        let reservations: u32 = reservations.trim().parse().unwrap();
        assert!(
            (1..=5).contains(&reservations),
            "100,000 ids took {reservations} reservations"
        );
        // A trigger on the gdid tables is refused when a store opens (code that would run with
        // its privileges): gone before the next session opens one.
        server
            .query(0, "DROP TRIGGER counted ON public.gdid_counters")
            .unwrap();
        let reserved: u64 = counter(&server).parse().unwrap();
        assert!(reserved > 100_002, "the session reserved ahead: {reserved}");
        session.close().await.unwrap();

        // The session's end gives back the unused end of its block (the backend exits after
        // the client has gone: waited for, up to 5 s).
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while counter(&server) != "100002" && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert_eq!(counter(&server), "100002", "the unused end was given back");
        let mut next = connect(&url).await;
        let after: String = sqlx::query_scalar("SELECT gdid_next('grow', 'g')::text")
            .fetch_one(&mut next)
            .await
            .unwrap();
        assert_eq!(
            after, "0:1:100002",
            "the next session goes on without a gap"
        );
    });
}

/// A session keeps blocks of at most 1,000 sequences: after 1,001, the block reserved first was
/// dropped (its next id starts a new block: a gap, never a repeat) and the last is still served.
/// However many sequences it reserves, a session holds one connection to the store. The code
/// before fails it twice over (not run: it kept every block, so `s0` went on with its own, and
/// its connection had no `application_name`).
#[test]
fn a_session_holds_blocks_of_at_most_1000_sequences_on_one_connection() {
    let Some(server) = server(0) else { return };
    let url = server.url(0);
    runtime().block_on(async {
        let mut session = connect(&url).await;
        set_cache(&mut session, 10).await;
        let reserved: i64 = sqlx::query_scalar(
            "SELECT count(gdid_next('many', 's' || n)) FROM generate_series(0, 1000) AS n",
        )
        .fetch_one(&mut session)
        .await
        .unwrap();
        assert_eq!(reserved, 1001);
        let connections: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'gdid_next'",
        )
        .fetch_one(&mut session)
        .await
        .unwrap();
        assert_eq!(connections, 1);
        let (first, last): (String, String) = sqlx::query_as(
            "SELECT gdid_next('many', 's0')::text, gdid_next('many', 's1000')::text",
        )
        .fetch_one(&mut session)
        .await
        .unwrap();
        assert_eq!((first.as_str(), last.as_str()), ("0:1:11", "0:1:2"));
    });
}

// ----------------------------------------------------------------------------------------------
// Who the extension's connection is, and who may call it: stock authentication, ordinary roles
// ----------------------------------------------------------------------------------------------

/// A private primary authenticating as a stock installation does ([`PostgresReplicas::start_stock`]),
/// the library preloaded as docs/interoperability.md asks (`shared_preload_libraries = 'gdid'`),
/// started with `settings` too, the extension created in its `postgres` database; `None`, said
/// skipped, as [`server`] says.
fn stock_server(settings: &[&str]) -> Option<PostgresReplicas> {
    let mut replicas = with_extension(|| PostgresReplicas::start_stock(settings))?;
    replicas
        .query(0, "ALTER SYSTEM SET shared_preload_libraries = 'gdid'")
        .unwrap();
    replicas.stop(0).unwrap();
    replicas.start_again(0).unwrap();
    Some(replicas)
}

/// The DBA's set-up of docs/interoperability.md ("Setting up gdid_next"), with a peer map: the
/// role `gdid_issuer`, its schema privileges, and `pg_hba.conf` letting the server's OS user in
/// as that role over the socket (`pg_ident.conf`: `gdid <server's OS user> gdid_issuer`).
fn dba_set_up(server: &mut PostgresReplicas, i: usize) {
    server
        .query(
            i,
            "CREATE ROLE gdid_issuer LOGIN; GRANT CREATE, USAGE ON SCHEMA public TO gdid_issuer",
        )
        .unwrap();
    let os_user = server.server_user().unwrap();
    server
        .authenticate(
            i,
            &["local all gdid_issuer peer map=gdid"],
            &[&format!("gdid {os_user} gdid_issuer")],
        )
        .unwrap();
}

/// Makes `role` a login role with a password (its name, then `-pw`) and, when `may_issue`, the
/// grants of docs/interoperability.md: `EXECUTE` on `gdid_next`, and scope `shop` in
/// `gdid.scopes` (which then grants it to this role alone); returns its URL.
fn login_role(server: &PostgresReplicas, i: usize, role: &str, may_issue: bool) -> String {
    server
        .query(i, &format!("CREATE ROLE {role} LOGIN PASSWORD '{role}-pw'"))
        .unwrap();
    if may_issue {
        server
            .query(
                i,
                &format!("GRANT EXECUTE ON FUNCTION gdid_next(text, text) TO {role}"),
            )
            .unwrap();
        grant_scopes(server, i, &format!("shop={role}"));
    }
    server.url_as(i, role, &format!("{role}-pw"))
}

/// Sets server `i`'s `gdid.scopes` to `grants` (`ALTER SYSTEM`), and waits until a new session
/// reads it.
fn grant_scopes(server: &PostgresReplicas, i: usize, grants: &str) {
    server
        .query(i, &format!("ALTER SYSTEM SET gdid.scopes = '{grants}'"))
        .unwrap();
    server.query(i, "SELECT pg_reload_conf()").unwrap();
    for _ in 0..200 {
        let now = server
            .query(i, "SELECT current_setting('gdid.scopes', true)")
            .unwrap();
        if now.trim() == grants {
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(25));
    }
    panic!("gdid.scopes is not {grants:?} after a reload");
}

/// What the server said when `sql` failed: its SQLSTATE, message and detail.
async fn refusal(session: &mut PgConnection, sql: &'static str) -> (String, String, String) {
    let error = sqlx::query(sql).execute(session).await.unwrap_err();
    let Some(error) = error.as_database_error() else {
        panic!("{error}")
    };
    let postgres = error.downcast_ref::<sqlx::postgres::PgDatabaseError>();
    (
        error.code().unwrap_or_default().into_owned(),
        error.message().to_owned(),
        postgres.detail().unwrap_or_default().to_owned(),
    )
}

/// The server's sessions other than `psql`'s own, as `user/application` lines: who is connected.
fn sessions(server: &PostgresReplicas) -> Vec<String> {
    let text = server
        .query(
            0,
            "SELECT usename || '/' || coalesce(application_name, '') FROM pg_stat_activity \
             WHERE backend_type = 'client backend' AND pid <> pg_backend_pid() ORDER BY 1",
        )
        .unwrap();
    text.lines().map(str::to_owned).collect()
}

/// Role mallory, who may issue ids but is no superuser, shadows what the extension read through
/// SQL before (`current_setting`, `current_database`, in her own schema first on her
/// `search_path`) with values carrying URL syntax (`&user=postgres`, `?`, `#`, spaces,
/// `options=-c search_path=mallory`), and lays tables `gdid_counters` and `gdid_authority` in
/// her schema whose triggers make her a superuser when a superuser writes them. On the code
/// before the dedicated role, the first call connected as `postgres` (peer, the server's OS
/// user), wrote her tables, and the trigger made her a superuser; every non-superuser's call
/// failed besides (`unix_socket_directories` is superusers' to read) — seen failing so.
///
/// Now: before the DBA's set-up her call fails, saying which role to create and let in (one
/// sentence, no backtrace); after it, every variant issues ids from the public tables; she is
/// still no superuser, her tables were never written, no one but her and `gdid_issuer` (the
/// extension's connection, `application_name` gdid_next) was ever connected, and she cannot read
/// `gdid.store_url`.
#[test]
fn a_role_shadowing_what_the_extension_reads_gets_no_other_role_and_no_superuser() {
    let Some(mut server) = stock_server(&[]) else {
        return;
    };
    let mallory = login_role(&server, 0, "mallory", true);
    server
        .query(0, "CREATE SCHEMA mallory AUTHORIZATION mallory")
        .unwrap();
    let port = server.address(0).port();
    let socket = server.socket_folder(0).display().to_string();
    let payload = "&user=postgres&options=-c%20search_path%3Dmallory";
    let lay_trap = "CREATE TABLE mallory.seen (who text, at timestamptz DEFAULT now()); \
         GRANT INSERT ON mallory.seen TO PUBLIC; \
         CREATE TABLE mallory.gdid_authority (id SMALLINT NOT NULL PRIMARY KEY, \
           authority SMALLINT NOT NULL); \
         CREATE TABLE mallory.gdid_counters (authority SMALLINT NOT NULL, \
           scope_name VARCHAR(80) NOT NULL, sequence_name VARCHAR(80) NOT NULL, \
           era BIGINT NOT NULL, next_counter BIGINT NOT NULL, allocated_at BIGINT NULL, \
           previous_at BIGINT NULL, allocated_size BIGINT NULL, lineage VARCHAR(200) NULL, \
           fenced_at BIGINT NULL, PRIMARY KEY (authority, scope_name, sequence_name)); \
         GRANT ALL ON mallory.gdid_authority, mallory.gdid_counters TO PUBLIC; \
         GRANT USAGE ON SCHEMA mallory TO PUBLIC; \
         CREATE FUNCTION mallory.escalate() RETURNS trigger LANGUAGE plpgsql AS $$ \
         BEGIN \
           INSERT INTO mallory.seen (who) VALUES (session_user); \
           BEGIN EXECUTE 'ALTER ROLE mallory SUPERUSER'; EXCEPTION WHEN OTHERS THEN NULL; END; \
           RETURN NEW; \
         END $$; \
         CREATE TRIGGER escalate BEFORE INSERT OR UPDATE ON mallory.gdid_authority \
           FOR EACH ROW EXECUTE FUNCTION mallory.escalate(); \
         CREATE TRIGGER escalate BEFORE INSERT OR UPDATE ON mallory.gdid_counters \
           FOR EACH ROW EXECUTE FUNCTION mallory.escalate()";
    // Each variant shadows one thing the extension read through SQL before.
    let variants = [
        // The port, put into the URL unescaped before: logs in as postgres.
        format!(
            "CREATE OR REPLACE FUNCTION mallory.current_setting(text) RETURNS text \
             LANGUAGE sql AS $$ SELECT CASE $1 WHEN 'port' THEN '{port}{payload}' \
             WHEN 'unix_socket_directories' THEN '{socket}' \
             ELSE pg_catalog.current_setting($1) END $$"
        ),
        // The socket's folder, with a query, a fragment and spaces.
        format!(
            "CREATE OR REPLACE FUNCTION mallory.current_setting(text) RETURNS text \
             LANGUAGE sql AS $$ SELECT CASE $1 WHEN 'port' THEN '{port}' \
             WHEN 'unix_socket_directories' THEN '{socket}?user=postgres&dbname=postgres#x y' \
             ELSE pg_catalog.current_setting($1) END $$"
        ),
        // The database's name.
        format!(
            "CREATE OR REPLACE FUNCTION mallory.current_database() RETURNS name \
             LANGUAGE sql AS $$ SELECT 'postgres?user=postgres&options=-c search_path=mallory#'::name $$; \
             CREATE OR REPLACE FUNCTION mallory.current_setting(text) RETURNS text \
             LANGUAGE sql AS $$ SELECT CASE $1 WHEN 'unix_socket_directories' THEN '{socket}' \
             ELSE pg_catalog.current_setting($1) END $$"
        ),
    ];
    let check = |server: &PostgresReplicas, when: &str| {
        assert_eq!(
            server
                .query(0, "SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'")
                .unwrap(),
            "f",
            "{when}: mallory became a superuser"
        );
        assert_eq!(
            server
                .query(
                    0,
                    "SELECT (SELECT count(*) FROM mallory.seen) + \
                     (SELECT count(*) FROM mallory.gdid_counters) + \
                     (SELECT count(*) FROM mallory.gdid_authority)"
                )
                .unwrap(),
            "0",
            "{when}: mallory's tables were written"
        );
        for session in sessions(server) {
            assert!(
                session == "mallory/" || session == "gdid_issuer/gdid_next",
                "{when}: a session of another role: {session:?} in {:?}",
                sessions(server)
            );
        }
    };
    let runtime = runtime();
    runtime.block_on(async {
        let mut session = connect(&mallory).await;
        session.execute(lay_trap).await.unwrap();
        session
            .execute(AssertSqlSafe(variants[0].clone()))
            .await
            .unwrap();
        session
            .execute("SET search_path = mallory, pg_catalog, public")
            .await
            .unwrap();
        // Before the DBA's set-up: refused, saying what to do.
        let (code, message, detail) =
            refusal(&mut session, "SELECT public.gdid_next('shop', 'x')").await;
        check(&server, "before the set-up");
        assert_eq!(code, "08006", "{message}");
        assert!(
            message.contains("gdid_next connects as role gdid_issuer (gdid.role)")
                && message.contains("create the role and let it in"),
            "{message}"
        );
        assert!(
            !detail.contains("backtrace") && !detail.contains(".rs:"),
            "{detail}"
        );
        // She cannot read the store's URL.
        let (_, hidden, _) =
            refusal(&mut session, "SELECT current_setting('gdid.store_url')").await;
        assert!(
            hidden.contains("permission denied") || hidden.contains("must be superuser"),
            "{hidden}"
        );
    });
    dba_set_up(&mut server, 0);
    runtime.block_on(async {
        let mut ids = Vec::new();
        for (n, variant) in variants.iter().enumerate() {
            // A new session each: the extension's connection is opened by the first call.
            let mut session = connect(&mallory).await;
            session
                .execute(AssertSqlSafe(variant.clone()))
                .await
                .unwrap();
            session
                .execute("SET search_path = mallory, pg_catalog, public")
                .await
                .unwrap();
            for _ in 0..3 {
                let id: PgGdid = sqlx::query_scalar("SELECT public.gdid_next('shop', 'x')")
                    .fetch_one(&mut session)
                    .await
                    .unwrap_or_else(|e| panic!("variant {n}: {e}"));
                ids.push(id.0);
            }
            check(&server, &format!("variant {n}, its session open"));
            assert!(
                sessions(&server).contains(&"gdid_issuer/gdid_next".to_owned()),
                "variant {n}: {:?}",
                sessions(&server)
            );
        }
        let distinct: BTreeSet<Gdid> = ids.iter().copied().collect();
        assert_eq!(distinct.len(), ids.len(), "{ids:?}");
    });
    assert_eq!(
        server
            .query(0, "SELECT count(*) FROM public.gdid_counters")
            .unwrap(),
        "1"
    );
    check(&server, "at the end");
}

/// `gdid_next` is not PUBLIC's: a role without the grant gets PostgreSQL's own "permission
/// denied" (42501) before the extension does anything; with `EXECUTE` it is refused by the
/// extension until `gdid.scopes` grants it the scope; the two grants of docs/interoperability.md
/// let it issue. Before, every role could call it (and, not being a superuser, failed reading
/// `unix_socket_directories` instead) — seen failing so.
#[test]
fn a_role_without_the_grant_is_refused_by_postgresql() {
    let Some(mut server) = stock_server(&[]) else {
        return;
    };
    dba_set_up(&mut server, 0);
    let stranger = login_role(&server, 0, "stranger", false);
    runtime().block_on(async {
        let mut session = connect(&stranger).await;
        let (code, message, _) = refusal(&mut session, "SELECT gdid_next('shop', 'x')").await;
        assert_eq!(code, "42501", "{message}");
        assert!(
            message.contains("permission denied for function gdid_next"),
            "{message}"
        );
        // A column default calls it as the inserting role: refused the same way.
        server
            .query(
                0,
                "CREATE TABLE d (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 'd')); \
                 GRANT INSERT ON d TO stranger",
            )
            .unwrap();
        let (code, message, _) = refusal(&mut session, "INSERT INTO d DEFAULT VALUES").await;
        assert_eq!(code, "42501", "{message}");
        // EXECUTE alone issues from no scope; with the scope granted too, the insert goes in.
        server
            .query(
                0,
                "GRANT EXECUTE ON FUNCTION gdid_next(text, text) TO stranger",
            )
            .unwrap();
        let (code, message, _) = refusal(&mut session, "INSERT INTO d DEFAULT VALUES").await;
        assert_eq!(code, "42501", "{message}");
        assert!(message.contains("may not issue from scope"), "{message}");
        grant_scopes(&server, 0, "shop=stranger");
        session
            .execute("INSERT INTO d DEFAULT VALUES")
            .await
            .unwrap();
    });
    assert_eq!(server.query(0, "SELECT id FROM d").unwrap(), "0:1:1");
}

/// An ordinary role issues ids after the DBA's set-up, both ways docs/interoperability.md gives:
/// a peer map (no password anywhere), then a password in the server's passfile (pg_hba asking
/// `gdid_issuer` for one), there with tables the DBA made (`gdid schema print`) and `gdid_issuer`
/// given only `SELECT, INSERT, UPDATE` on them. Names the engine refuses are refused before the
/// store is touched, in one sentence. Before, a non-superuser's call failed whatever the set-up
/// (`unix_socket_directories` is superusers' to read) — seen failing so.
#[test]
fn an_ordinary_role_issues_ids_after_the_dbas_set_up() {
    let Some(mut server) = stock_server(&[]) else {
        return;
    };
    dba_set_up(&mut server, 0);
    let app = login_role(&server, 0, "app", true);
    server
        .query(
            0,
            "CREATE TABLE orders (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 'orders'), \
             item text); GRANT INSERT, SELECT ON orders TO app",
        )
        .unwrap();
    let runtime = runtime();
    let peer = runtime.block_on(async {
        let mut session = connect(&app).await;
        let (code, message, _) = refusal(&mut session, "SELECT gdid_next('shop', '-x')").await;
        assert_eq!(code, "22023", "{message}");
        assert!(message.contains("'-' is not allowed first"), "{message}");
        insert(&mut session, "orders", 5).await
    });
    assert_eq!(
        peer.iter().map(ToString::to_string).collect::<Vec<_>>(),
        ["0:1:1", "0:1:2", "0:1:3", "0:1:4", "0:1:5"]
    );
    // The tables were made by the issuer's role, in gdid.schema.
    assert_eq!(
        server
            .query(
                0,
                "SELECT string_agg(schemaname || '.' || tablename || ' ' || tableowner, ', ' \
                 ORDER BY tablename) FROM pg_tables WHERE tablename LIKE 'gdid%'"
            )
            .unwrap(),
        "public.gdid_authority gdid_issuer, public.gdid_counters gdid_issuer"
    );
    // A password instead: a new server, where pg_hba asks gdid_issuer for one (the stock
    // `local all all scram-sha-256`) and the server's passfile holds it.
    let Some(server) = stock_server(&[]) else {
        return;
    };
    server
        .query(0, "CREATE ROLE gdid_issuer LOGIN PASSWORD 'issuer-pw'")
        .unwrap();
    let app = login_role(&server, 0, "app", true);
    // The tables made by the DBA (a superuser owns them), the issuer given no CREATE.
    let binary = gdid_binary().unwrap_or_else(|e| panic!("{e}"));
    let store = format!("{}?schema=public", server.url_as(0, "app", "app-pw"));
    let ddl = Command::new(binary)
        .args(["schema", "print", "--store", &store])
        .output()
        .unwrap();
    assert!(ddl.status.success(), "{ddl:?}");
    server
        .query(0, &String::from_utf8_lossy(&ddl.stdout))
        .unwrap();
    server
        .query(
            0,
            "GRANT SELECT, INSERT, UPDATE ON public.gdid_counters, public.gdid_authority \
             TO gdid_issuer",
        )
        .unwrap();
    runtime.block_on(async {
        let mut session = connect(&app).await;
        // No passfile yet: refused (password authentication), saying what to do.
        let (_, message, _) = refusal(&mut session, "SELECT gdid_next('shop', 'p')").await;
        assert!(
            message.contains("could not log in over this server's Unix socket"),
            "{message}"
        );
    });
    server
        .write_passfile(0, "*:*:*:gdid_issuer:issuer-pw\n")
        .unwrap();
    runtime.block_on(async {
        // The first session waits out its back-off; a new one tries at once.
        let mut session = connect(&app).await;
        let id: PgGdid = sqlx::query_scalar("SELECT gdid_next('shop', 'p')")
            .fetch_one(&mut session)
            .await
            .unwrap();
        assert_eq!(id.0.to_string(), "0:1:1");
    });
    assert_eq!(
        server
            .query(
                0,
                "SELECT string_agg(tablename || ' ' || tableowner, ', ' ORDER BY tablename) \
                 FROM pg_tables WHERE tablename IN ('gdid_counters', 'gdid_authority')"
            )
            .unwrap(),
        "gdid_authority postgres, gdid_counters postgres"
    );
}

/// Which roles issue from which scope is the DBA's: `EXECUTE` on `gdid_next` is not enough. As
/// ordinary roles: `app`, without a scope in `gdid.scopes`, is refused with a message naming the
/// scope and the setting (before, every role with `EXECUTE` issued from every scope — seen
/// failing so); granted `shop` through a role it is a member of, it issues from `shop` and not
/// from `billing`, and loses it when the membership is revoked (in a session that passed the
/// check before); it cannot grant itself a scope.
/// The role checked is `current_user`: after `SET ROLE` to a role without the grant, the block
/// the session holds serves nothing; a `SECURITY DEFINER` function issues as its owner, whoever
/// calls it.
#[test]
fn a_role_issues_only_from_the_scopes_a_superuser_granted_it() {
    let Some(mut server) = stock_server(&[]) else {
        return;
    };
    dba_set_up(&mut server, 0);
    let app = login_role(&server, 0, "app", false);
    let caller = login_role(&server, 0, "caller", false);
    server
        .query(
            0,
            "GRANT EXECUTE ON FUNCTION gdid_next(text, text) TO app; \
             CREATE ROLE shop_writers NOLOGIN; CREATE ROLE reporting NOLOGIN; \
             GRANT reporting TO app; \
             CREATE FUNCTION public.next_order() RETURNS gdid LANGUAGE sql SECURITY DEFINER \
             SET search_path = pg_catalog, public AS $$ SELECT public.gdid_next('shop', 'o') $$; \
             CREATE FUNCTION public.next_report() RETURNS gdid LANGUAGE sql SECURITY DEFINER \
             SET search_path = pg_catalog, public AS $$ SELECT public.gdid_next('shop', 'o') $$; \
             ALTER FUNCTION public.next_order() OWNER TO app; \
             GRANT EXECUTE ON FUNCTION gdid_next(text, text) TO reporting; \
             ALTER FUNCTION public.next_report() OWNER TO reporting; \
             GRANT EXECUTE ON FUNCTION public.next_order(), public.next_report() TO caller, app",
        )
        .unwrap();
    let runtime = runtime();
    runtime.block_on(async {
        let mut session = connect(&app).await;
        let (code, message, _) = refusal(&mut session, "SELECT gdid_next('shop', 'o')").await;
        assert_eq!(code, "42501", "{message}");
        assert!(
            message.contains("role app may not issue from scope \"shop\"")
                && message.contains("shop=ROLE")
                && message.contains("gdid.scopes"),
            "{message}"
        );
        let (code, message, _) = refusal(&mut session, "SET gdid.scopes = '*=app'").await;
        assert_eq!(code, "42501", "{message}");
    });
    grant_scopes(&server, 0, "shop=shop_writers, billing=billing_app");
    server.query(0, "GRANT shop_writers TO app").unwrap();
    runtime.block_on(async {
        let mut session = connect(&app).await;
        let id: PgGdid = sqlx::query_scalar("SELECT gdid_next('shop', 'o')")
            .fetch_one(&mut session)
            .await
            .unwrap();
        assert_eq!(id.0.to_string(), "0:1:1");
        let (code, message, _) = refusal(&mut session, "SELECT gdid_next('billing', 'o')").await;
        assert_eq!(code, "42501", "{message}");
        // The session holds the rest of a block of shop/o: a role without the grant gets none.
        session.execute("SET ROLE reporting").await.unwrap();
        let (code, message, _) = refusal(&mut session, "SELECT gdid_next('shop', 'o')").await;
        assert_eq!(code, "42501", "{message}");
        assert!(message.contains("role reporting may not"), "{message}");
        // A definer's function runs as its owner: reporting's refused, app's issues.
        let (code, message, _) = refusal(&mut session, "SELECT public.next_report()").await;
        assert_eq!(code, "42501", "{message}");
        session.execute("RESET ROLE").await.unwrap();
        let (code, _, _) = refusal(&mut session, "SELECT public.next_report()").await;
        assert_eq!(code, "42501");
        let id: PgGdid = sqlx::query_scalar("SELECT public.next_order()")
            .fetch_one(&mut session)
            .await
            .unwrap();
        assert_eq!(id.0.to_string(), "0:1:2");
    });
    runtime.block_on(async {
        // A caller with neither grant issues through app's function, as app.
        let mut session = connect(&caller).await;
        let (code, _, _) = refusal(&mut session, "SELECT gdid_next('shop', 'o')").await;
        assert_eq!(code, "42501", "no EXECUTE on gdid_next");
        let id: PgGdid = sqlx::query_scalar("SELECT public.next_order()")
            .fetch_one(&mut session)
            .await
            .unwrap();
        assert!(id.0.counter() > 2, "{}", id.0);
    });
    runtime.block_on(async {
        // A session that passed the check loses the scope with the membership, at its next call.
        let mut session = connect(&app).await;
        sqlx::query_scalar::<_, PgGdid>("SELECT gdid_next('shop', 'o')")
            .fetch_one(&mut session)
            .await
            .unwrap();
        server.query(0, "REVOKE shop_writers FROM app").unwrap();
        let (code, message, _) = refusal(&mut session, "SELECT gdid_next('shop', 'o')").await;
        assert_eq!(code, "42501", "{message}");
    });
}

/// A role that may issue from a scope cannot fill the store with sequences of it:
/// `gdid.max_sequences_per_scope` bounds the sequences one scope holds records of, in the store,
/// so every session and every Rust store beside the extension counts the same records. Before,
/// `gdid_next('s', 'q' || n)` over a series made a record per call — seen failing so.
#[test]
fn the_sequences_of_a_scope_are_bounded_by_the_dbas_setting() {
    let Some(mut server) = stock_server(&[]) else {
        return;
    };
    dba_set_up(&mut server, 0);
    configure(&server, "gdid.max_sequences_per_scope = 3");
    server
        .query(0, "ALTER ROLE postgres PASSWORD 'postgres-pw'")
        .unwrap();
    let url = server.url_as(0, "postgres", "postgres-pw");
    let runtime = runtime();
    runtime.block_on(async {
        let mut session = connect(&url).await;
        reloaded(&mut session, "gdid.max_sequences_per_scope", "3").await;
        let made: i64 = sqlx::query_scalar(
            "SELECT count(gdid_next('bounded', 's' || n)) FROM generate_series(1, 3) AS n",
        )
        .fetch_one(&mut session)
        .await
        .unwrap();
        assert_eq!(made, 3);
        let (code, message, _) = refusal(
            &mut session,
            "SELECT count(gdid_next('bounded', 's' || n)) FROM generate_series(1, 1000) AS n",
        )
        .await;
        assert_eq!(code, "22023", "{message}");
        assert!(
            message.contains("\"s4\"")
                && message.contains("scope \"bounded\", which holds 3 already")
                && message.contains("max_sequences_per_scope"),
            "{message}"
        );
        // The sequences it holds go on in the same session; another scope has room.
        for sql in [
            "SELECT gdid_next('bounded', 's1')::text",
            "SELECT gdid_next('other', 's4')::text",
        ] {
            sqlx::query_scalar::<_, String>(sql)
                .fetch_one(&mut session)
                .await
                .unwrap_or_else(|e| panic!("{sql}: {e}"));
        }
        // Another session counts the same records.
        let mut another = connect(&url).await;
        let (code, _, _) = refusal(&mut another, "SELECT gdid_next('bounded', 's5')").await;
        assert_eq!(code, "22023");
    });
    let records = server
        .query(
            0,
            "SELECT count(DISTINCT sequence_name) FROM gdid_counters WHERE scope_name = 'bounded'",
        )
        .unwrap();
    assert_eq!(records.trim(), "3");
    // A Rust store told the same bound refuses the same way.
    runtime.block_on(async {
        let store = Store::open(&format!(
            "{}&max_sequences_per_scope=3",
            beside_the_extension(&url)
        ))
        .await
        .unwrap();
        let ids = store.block_generator("bounded", "s6").build().unwrap();
        let refused = gdid::IdGenerator::next_id(&ids).await.unwrap_err();
        assert!(
            refused.to_string().contains("which holds 3 already"),
            "{refused}"
        );
    });
}

/// Two servers, `gdid.authority` 1 and 2, issue ids of one sequence: none twice (each store
/// recorded its number). A server whose number is then changed to one its store did not record
/// is refused with a sentence naming both settings. Before, the setting did not exist: both
/// stores took number 1 and issued the same ids — seen failing so.
#[test]
fn two_servers_with_authorities_1_and_2_share_a_sequence_without_a_repeat() {
    let mut servers = Vec::new();
    for number in [1, 2] {
        let Some(server) = stock_server(&[]) else {
            return;
        };
        configure(&server, &format!("gdid.authority = {number}"));
        servers.push(server);
    }
    let runtime = runtime();
    let mut writers = Vec::new();
    for (i, server) in servers.iter_mut().enumerate() {
        dba_set_up(server, 0);
        let app = login_role(server, 0, "app", true);
        server
            .query(
                0,
                "CREATE TABLE s (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 's')); \
                 GRANT INSERT, SELECT ON s TO app",
            )
            .unwrap();
        let ids = runtime.block_on(async {
            let mut session = connect(&app).await;
            reloaded(&mut session, "gdid.authority", &(i + 1).to_string()).await;
            set_cache(&mut session, 7).await;
            insert(&mut session, "s", 40).await
        });
        assert!(
            ids.iter().all(|id| usize::from(id.authority()) == i + 1),
            "server {i}: {ids:?}"
        );
        writers.push(ids);
    }
    assert_no_id_twice("authorities", &writers);
    // Another number than the one recorded: refused.
    let server = &servers[1];
    configure(server, "gdid.authority = 3");
    let app = server.url_as(0, "app", "app-pw");
    runtime.block_on(async {
        let mut session = connect(&app).await;
        reloaded(&mut session, "gdid.authority", "3").await;
        let (_, message, _) = refusal(&mut session, "SELECT gdid_next('shop', 's')").await;
        assert!(
            message.contains("as authority number 3 (gdid.authority)")
                && message.contains("set gdid.authority to the number the store recorded"),
            "{message}"
        );
    });
}

/// A role and a database that do not wait for their commits (`synchronous_commit = off`, the WAL
/// writer waking every 10 s): when `gdid_next` returns, the reservation's commit is on disk
/// (`pg_current_wal_flush_lsn()` past the WAL position before the call), since a block used
/// before its counter is flushed could be issued again after a crash. The store raises
/// `synchronous_commit` in its reserving statement. Before, a non-superuser's call failed
/// (`unix_socket_directories`) — seen failing so.
#[test]
fn the_reservation_is_flushed_before_its_ids_are_used_whatever_the_caller_commits() {
    let Some(mut server) = stock_server(&["wal_writer_delay=10s"]) else {
        return;
    };
    dba_set_up(&mut server, 0);
    let app = login_role(&server, 0, "app", true);
    server
        .query(
            0,
            "ALTER ROLE app SET synchronous_commit = off; \
             ALTER DATABASE postgres SET synchronous_commit = off",
        )
        .unwrap();
    runtime().block_on(async {
        let mut session = connect(&app).await;
        set_cache(&mut session, 1).await;
        // The first call opens the store.
        sqlx::query("SELECT gdid_next('shop', 'w')")
            .execute(&mut session)
            .await
            .unwrap();
        for _ in 0..5 {
            let before: String = sqlx::query_scalar("SELECT pg_current_wal_insert_lsn()::text")
                .fetch_one(&mut session)
                .await
                .unwrap();
            sqlx::query("SELECT gdid_next('shop', 'w')")
                .execute(&mut session)
                .await
                .unwrap();
            let flushed: bool =
                sqlx::query_scalar("SELECT pg_current_wal_flush_lsn() > $1::pg_lsn")
                    .bind(&before)
                    .fetch_one(&mut session)
                    .await
                    .unwrap();
            assert!(flushed, "the reservation after {before} was not flushed");
        }
    });
}

/// One round of `gdid_next` calls on `sequence`, with blocks of 2 so that each call but one
/// reserves: 5 ids as a superuser (`psql`), then 5 as the application `app`. Waits until every
/// session's own connection has closed (each gives the end of its block back as it ends), and
/// returns the statements `gdid_issuer` ran meanwhile (its `log_statement` is `all`), with what
/// failed.
fn issuer_round(
    server: &PostgresReplicas,
    app: &str,
    sequence: &str,
) -> (Vec<String>, Vec<String>) {
    let log = server.log(0);
    let from = std::fs::metadata(&log).map_or(0, |m| m.len());
    let mut failed = Vec::new();
    let calls = format!(
        "SELECT set_config('gdid.cache', '2', false), set_config('gdid.cache_max', '2', false); \
         SELECT gdid_next('shop', '{sequence}') FROM generate_series(1, 5)"
    );
    if let Err(error) = server.query(0, &calls) {
        failed.push(format!("as a superuser: {error}"));
    }
    runtime().block_on(async {
        let mut session = connect(app).await;
        set_cache(&mut session, 2).await;
        for _ in 0..5 {
            let issued: Result<PgGdid, _> = sqlx::query_scalar(AssertSqlSafe(format!(
                "SELECT gdid_next('shop', '{sequence}')"
            )))
            .fetch_one(&mut session)
            .await;
            if let Err(error) = issued {
                failed.push(format!("as the application: {error}"));
                break;
            }
        }
        session.close().await.unwrap();
    });
    let started = std::time::Instant::now();
    while sessions(server)
        .iter()
        .any(|s| s.starts_with("gdid_issuer/"))
    {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(10),
            "the issuer's connections stayed open: {:?}",
            sessions(server)
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let text = std::fs::read(&log).unwrap();
    let from = usize::try_from(from).unwrap().min(text.len());
    let logged = planted::logged_statements(&String::from_utf8_lossy(&text[from..]));
    (logged, failed)
}

/// The class test of planted operators and functions (`test_least_privilege.rs` has it for the
/// Rust stores and the CLI), through `gdid_next`, on the DBA's set-up of
/// docs/interoperability.md, where `gdid_issuer` and a role `planter` have `CREATE` on `public`,
/// the schema of the gdid tables: the statements of the extension's own connection in a first
/// round are read off the server's log, `planter` plants an overload of every operator and
/// function they use for every combination of the argument types they present (each logging its
/// caller, and making `planter` a superuser when a superuser calls it), and a second round as a
/// superuser and as an application runs every one of those statements again: nothing planted
/// runs, and `planter` is no superuser.
#[test]
fn no_operator_or_function_another_role_planted_runs_under_gdid_next() {
    let Some(mut server) = stock_server(&[]) else {
        return;
    };
    dba_set_up(&mut server, 0);
    server
        .query(
            0,
            "ALTER ROLE gdid_issuer SET log_statement = 'all'; CREATE ROLE planter; \
             GRANT CREATE, USAGE ON SCHEMA public TO planter; \
             CREATE TABLE public.planted_calls (who text, what text); \
             GRANT INSERT, SELECT ON public.planted_calls TO PUBLIC",
        )
        .unwrap();
    let app = login_role(&server, 0, "names_app", true);
    let (seen, failed) = issuer_round(&server, &app, "seen");
    assert!(failed.is_empty(), "without plants: {failed:#?}");
    assert!(seen.len() >= 5, "the issuer ran {seen:#?}");
    // The second round makes the tables again, as the first did: every statement runs again.
    server
        .query(0, "DROP TABLE public.gdid_counters, public.gdid_authority")
        .unwrap();
    let uses = planted::Uses::of(seen.iter().map(String::as_str));
    // Too many statements for psql's command line: on a connection of a superuser's.
    server
        .query(0, "ALTER ROLE postgres PASSWORD 'postgres-pw'")
        .unwrap();
    let superuser = server.url_as(0, "postgres", "postgres-pw");
    runtime().block_on(async {
        let mut connection = connect(&superuser).await;
        connection.execute("SET ROLE planter").await.unwrap();
        for statement in uses.plant("public", "planter") {
            connection
                .execute(AssertSqlSafe(statement.as_str()))
                .await
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
    });
    let (again, failed) = issuer_round(&server, &app, "planted");
    assert_eq!(
        server
            .query(0, "SELECT rolsuper FROM pg_roles WHERE rolname = 'planter'")
            .unwrap(),
        "f",
        "the planter became a superuser"
    );
    let calls = server
        .query(
            0,
            "SELECT who || ' called ' || what || ' ' || count(*) || ' times' \
             FROM public.planted_calls GROUP BY who, what ORDER BY 1",
        )
        .unwrap();
    assert_eq!(calls, "", "planted objects ran");
    assert!(failed.is_empty(), "with the plants in place: {failed:#?}");
    let missing = planted::not_run_again(&seen, &again);
    assert!(missing.is_empty(), "not run again: {missing:#?}");
}

/// A store trusts only tables (and a schema) of a superuser, the database's owner, its own role
/// or the role named for the purpose: those the DBA's role `ids_admin` (no superuser) made in
/// its schema are refused by `gdid_next`, naming their owner, until `gdid.owner` names it.
#[test]
fn gdid_next_uses_another_roles_tables_only_when_gdid_owner_names_it() {
    let Some(mut server) = stock_server(&[]) else {
        return;
    };
    dba_set_up(&mut server, 0);
    let admin = login_role(&server, 0, "ids_admin", false);
    let app = login_role(&server, 0, "owner_app", true);
    server
        .query(
            0,
            "CREATE SCHEMA ids AUTHORIZATION ids_admin; GRANT USAGE ON SCHEMA ids TO gdid_issuer",
        )
        .unwrap();
    let applied = Command::new(gdid_binary().unwrap())
        .args(["schema", "apply", "--store", &format!("{admin}?schema=ids")])
        .output()
        .unwrap();
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    server
        .query(
            0,
            "SET ROLE ids_admin; \
             GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA ids TO gdid_issuer",
        )
        .unwrap();
    configure(&server, "gdid.schema = 'ids'");
    let runtime = runtime();
    runtime.block_on(async {
        let mut session = connect(&app).await;
        reloaded(&mut session, "gdid.schema", "ids").await;
        let refused = failure(&mut session, "SELECT gdid_next('shop', 'o')").await;
        assert!(
            refused.contains("owned by role \"ids_admin\"") && refused.contains("owner="),
            "{refused}"
        );
    });
    configure(&server, "gdid.owner = 'ids_admin'");
    runtime.block_on(async {
        let mut session = connect(&app).await;
        reloaded(&mut session, "gdid.owner", "ids_admin").await;
        let id: PgGdid = sqlx::query_scalar("SELECT gdid_next('shop', 'o')")
            .fetch_one(&mut session)
            .await
            .unwrap();
        assert_eq!(id.0.to_string(), "0:1:1");
    });
}
