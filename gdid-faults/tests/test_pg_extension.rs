//! The PostgreSQL extension (`CREATE EXTENSION gdid`, crate gdid-postgres) on private servers:
//! ids issued by a column default, a rolled-back insert, many sessions beside a Rust generator
//! on one sequence, a failover to a lagging standby, a store that refuses or never answers, the
//! index on 100,000 rows, and the type read and written by sqlx and tokio-postgres.
//!
//! The extension must be installed in the PostgreSQL the private servers run
//! (`scripts/pg-extension install`); without it a test is skipped, and fails under `CI=true`.
//! `scripts/pg-extension test` installs it, then runs these. Build the command first (`cargo
//! build -p gdid-cli`): the duplicates are judged by `gdid verify`.

use std::collections::BTreeSet;
use std::process::Command;

use gdid::{Gdid, PgGdid, Store};
use gdid_faults::gdid_binary;
use gdid_faults::server::PostgresReplicas;
use sqlx::{AssertSqlSafe, Connection, Executor, PgConnection};

/// A private PostgreSQL primary (and `standbys` standbys) with the extension created in its
/// `postgres` database; `None`, said skipped, when PostgreSQL or the extension is not installed here
/// (a failure with `CI=true`).
fn server(standbys: usize) -> Option<PostgresReplicas> {
    if let Err(why) = PostgresReplicas::installed() {
        gdid_testkit::unavailable("PostgreSQL", &why);
        return None;
    }
    let mut replicas = PostgresReplicas::start().unwrap_or_else(|e| panic!("starting: {e}"));
    if let Err(why) = replicas.query(0, "CREATE EXTENSION gdid") {
        gdid_testkit::unavailable(
            "PostgreSQL",
            &format!("the gdid extension is not installed (scripts/pg-extension install): {why}"),
        );
        return None;
    }
    gdid_testkit::ran("PostgreSQL");
    for _ in 0..standbys {
        replicas
            .add_standby(0)
            .unwrap_or_else(|e| panic!("adding a standby: {e}"));
    }
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

/// Sets the session's `gdid.cache`: the counters it reserves at a time.
async fn set_cache(session: &mut PgConnection, cache: u32) {
    sqlx::query("SELECT set_config('gdid.cache', $1, false)")
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
        let store = Store::open(&server.url(0)).await.unwrap();
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
            let store = Store::open(&url).await.unwrap();
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
            let store = Store::open(&url).await.unwrap();
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
        on_standby.contains("could not reserve a block"),
        "{on_standby}"
    );
    assert!(on_standby.contains("read-only"), "{on_standby}");
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

/// What the server says (its message, without the detail) when `session` calls `gdid_next` with
/// `gdid.store_url` set to `store_url`.
async fn next_with(session: &mut PgConnection, store_url: String) -> String {
    sqlx::query("SELECT set_config('gdid.store_url', $1, false)")
        .bind(store_url)
        .execute(&mut *session)
        .await
        .unwrap();
    failure(session, "SELECT gdid_next('shop', 'x')").await
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

/// A store that refuses the connection is an error naming it without its password; one that
/// accepts and never answers is waited on until the session's `statement_timeout`, not forever.
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
        let refused = next_with(
            &mut session,
            format!("postgres://app:secret@127.0.0.1:{refused_port}/x"),
        )
        .await;
        assert!(
            refused.contains("could not reserve a block: cannot connect"),
            "{refused}"
        );
        assert!(
            refused.contains("app:***@") && !refused.contains("secret"),
            "{refused}"
        );

        sqlx::query("SET statement_timeout = '1s'")
            .execute(&mut session)
            .await
            .unwrap();
        let started = std::time::Instant::now();
        let silent_error = next_with(
            &mut session,
            format!("postgres://app@127.0.0.1:{silent_port}/x"),
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
