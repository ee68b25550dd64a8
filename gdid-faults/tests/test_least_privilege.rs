//! Stores as a real database's roles use them, on the suite's private servers: roles that are
//! not superusers, schemas of their own, an application role with only `SELECT, INSERT, UPDATE`
//! on the gdid tables (made by a DBA with `gdid schema apply`), a role whose
//! `synchronous_commit` is `off`, and tables planted by another role.
//!
//! Each database and role is made here, on servers of the suite's own: the machine's servers are
//! not changed. Build the command first (`cargo build -p gdid-cli`): some tests run `gdid`.

use std::process::Command;

use gdid::{IdGenerator, Store};
use gdid_faults::gdid_binary;
use gdid_faults::server::{Engine, PostgresReplicas, Server};
use sqlx::{AssertSqlSafe, Connection, Executor};

/// The suite's private server of `engine` ([`gdid_faults::private_server`]).
fn private(engine: Engine) -> Option<Server> {
    gdid_faults::private_server(engine)
}

fn block_on<F: Future>(future: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(future)
}

/// Runs each of `statements` on `url` (a superuser's or root's).
async fn run_as_dba(url: &str, statements: &[&str]) {
    if url.starts_with("postgres") {
        let mut connection = postgres_connection(url).await;
        for statement in statements {
            connection
                .execute(AssertSqlSafe(*statement))
                .await
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
    } else {
        let mut connection = sqlx::MySqlConnection::connect(url).await.unwrap();
        for statement in statements {
            connection
                .execute(AssertSqlSafe(*statement))
                .await
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
    }
}

/// A connection to `url`, once the server answers: a private server accepts connections a
/// moment before it can answer them ("the database system is starting up", SQLSTATE 57P03).
async fn postgres_connection(url: &str) -> sqlx::PgConnection {
    let started = std::time::Instant::now();
    loop {
        match sqlx::PgConnection::connect(url).await {
            Ok(connection) => return connection,
            Err(sqlx::Error::Database(e))
                if e.code().as_deref() == Some("57P03")
                    && started.elapsed() < std::time::Duration::from_secs(30) =>
            {
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            Err(e) => panic!("connecting to {url}: {e}"),
        }
    }
}

/// `url` (`scheme://user@host:port/db`) as `role`, in `database`.
fn as_role(url: &str, role: &str, database: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap();
    let (_, host_and_path) = rest.split_once('@').unwrap();
    let (host, _) = host_and_path.split_once('/').unwrap();
    format!("{scheme}://{role}:pw@{host}/{database}")
}

/// `gdid` with `args`: its stdout, or a panic with its stderr.
fn gdid(args: &[&str]) -> String {
    let output = Command::new(gdid_binary().unwrap())
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "gdid {args:?}: {stderr}");
    String::from_utf8(output.stdout).unwrap()
}

/// A PostgreSQL database of the test's own on the private server, and its superuser URL.
fn postgres_database(name: &str) -> Option<String> {
    let server = private(Engine::Postgres)?;
    let url = server.url().to_owned();
    block_on(run_as_dba(&url, &[&format!("CREATE DATABASE {name}")]));
    Some(as_role(&url, "postgres", name).replace(":pw@", "@"))
}

/// Two roles of one database, one with a schema of its own (PostgreSQL's "secure schema usage
/// pattern": `search_path` is `"$user", public`), share the store a DBA made in `public`: their
/// ids are one sequence, none repeated (`gdid verify`). Before, the second role's store made
/// tables of its own in its schema and issued `0:1:1` again.
#[test]
fn two_roles_with_schemas_of_their_own_share_one_store() {
    let Some(dba) = postgres_database("two_roles") else {
        return;
    };
    block_on(run_as_dba(
        &dba,
        &[
            "CREATE ROLE tr_app LOGIN PASSWORD 'pw'",
            "CREATE ROLE tr_svc LOGIN PASSWORD 'pw'",
            "CREATE SCHEMA tr_svc AUTHORIZATION tr_svc",
        ],
    ));
    gdid(&["schema", "apply", "--store", &dba]);
    block_on(run_as_dba(
        &dba,
        &["GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO tr_app, tr_svc"],
    ));
    let folder = std::env::temp_dir().join(format!("gdid-two-roles-{}", std::process::id()));
    std::fs::create_dir_all(&folder).unwrap();
    let mut files = Vec::new();
    for role in ["tr_app", "tr_svc", "tr_app"] {
        let url = as_role(&dba, role, "two_roles");
        let ids = gdid(&[
            "next",
            "--store",
            &url,
            "--sequence",
            "orders",
            "--count",
            "3",
        ]);
        let file = folder.join(format!("{role}-{}.txt", files.len()));
        std::fs::write(&file, &ids).unwrap();
        files.push(file);
    }
    let files: Vec<&str> = files.iter().map(|f| f.to_str().unwrap()).collect();
    let verified = gdid(&[&["verify"], files.as_slice()].concat());
    println!("{verified}");
    std::fs::remove_dir_all(&folder).unwrap();
    // tr_svc made no table of its own.
    let svc_tables = block_on(async {
        let mut connection = sqlx::PgConnection::connect(&dba).await.unwrap();
        let count: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_tables WHERE schemaname = 'tr_svc' AND tablename LIKE 'gdid%'",
        )
        .fetch_one(&mut connection)
        .await
        .unwrap();
        count
    });
    assert_eq!(svc_tables, 0);
}

/// Gdid tables visible in two schemas of a role's path are refused, naming both, and so are
/// tables only in schemas the path does not reach; the URL's `schema=` picks one.
#[test]
fn tables_in_two_schemas_of_the_path_are_refused_and_schema_picks_one() {
    let Some(dba) = postgres_database("two_schemas") else {
        return;
    };
    block_on(run_as_dba(
        &dba,
        &[
            "CREATE ROLE lena LOGIN PASSWORD 'pw'",
            "CREATE SCHEMA lena AUTHORIZATION lena",
            "CREATE ROLE otto LOGIN PASSWORD 'pw'",
            "CREATE SCHEMA otto AUTHORIZATION otto",
            "ALTER ROLE otto SET search_path = otto",
        ],
    ));
    gdid(&["schema", "apply", "--store", &dba]);
    let lena_schema = format!("{dba}?schema=lena").replace("postgres@", "lena:pw@");
    block_on(async {
        // lena makes tables in her own schema, named in the URL.
        let store = Store::open(&lena_schema).await.unwrap();
        let id = store
            .block_generator("shop", "orders")
            .build()
            .unwrap()
            .next_id()
            .await
            .unwrap();
        assert_eq!(id.counter(), 1);
        let refused = Store::open(&as_role(&dba, "lena", "two_schemas"))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("more than one schema") && refused.contains("\"lena\" and \"public\""),
            "{refused}"
        );
        // otto's path reaches neither: his store would be a second one beside them.
        let refused = Store::open(&as_role(&dba, "otto", "two_schemas"))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            refused.contains("does not reach") && refused.contains("\"lena\" and \"public\""),
            "{refused}"
        );
    });
}

/// A DBA makes the tables (`gdid schema apply`) and grants an application role `SELECT,
/// INSERT, UPDATE` on them, nothing else: the role opens the store (no DDL) and issues GDIDs
/// and one-at-a-time counters. A role with no privilege on them is refused with a message that
/// names `gdid schema`. Before, every open ran `CREATE TABLE IF NOT EXISTS`, which needs
/// `CREATE` on the schema (PostgreSQL) or the database (MariaDB).
#[test]
fn a_dml_only_role_opens_a_store_whose_tables_are_current() {
    let mut ran = false;
    if let Some(dba) = postgres_database("dml_only") {
        ran = true;
        block_on(run_as_dba(
            &dba,
            &[
                "CREATE ROLE dml_app LOGIN PASSWORD 'pw'",
                "CREATE ROLE dml_nobody LOGIN PASSWORD 'pw'",
                "REVOKE CREATE ON SCHEMA public FROM PUBLIC",
            ],
        ));
        // The DDL as printed, applied by the DBA as a script would be: what a store opening
        // the tables then needs is all there.
        let printed = gdid(&["schema", "print", "--store", &dba]);
        assert!(printed.contains("CREATE TABLE IF NOT EXISTS \"public\".gdid_counters"));
        let statements: Vec<&str> = printed
            .lines()
            .filter(|line| !line.is_empty() && !line.starts_with("--"))
            .map(|line| line.trim_end_matches(';'))
            .collect();
        block_on(run_as_dba(&dba, &statements));
        block_on(run_as_dba(
            &dba,
            &["GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO dml_app"],
        ));
        block_on(issues_as(&as_role(&dba, "dml_app", "dml_only")));
        block_on(refused_as(&as_role(&dba, "dml_nobody", "dml_only")));
    }
    if let Some(server) = private(Engine::MariaDb) {
        ran = true;
        // The suite's MariaDB runs without its grant tables (any client, every privilege):
        // FLUSH PRIVILEGES loads them, from then on checked; the root session that ran it
        // keeps its privileges to make the test's users, a DBA among them.
        let root = server.url().to_owned();
        block_on(run_as_dba(
            &root,
            &[
                "FLUSH PRIVILEGES",
                "CREATE USER 'dba'@'%' IDENTIFIED BY 'pw'",
                "GRANT ALL PRIVILEGES ON *.* TO 'dba'@'%' WITH GRANT OPTION",
                "CREATE DATABASE dml_only",
                "CREATE USER 'app'@'%' IDENTIFIED BY 'pw'",
                "CREATE USER 'nobody'@'%' IDENTIFIED BY 'pw'",
            ],
        ));
        let dba = as_role(&root, "dba", "dml_only");
        gdid(&["schema", "apply", "--store", &dba]);
        // nobody may read the authority record, and nothing else.
        block_on(run_as_dba(
            &dba,
            &[
                "GRANT SELECT, INSERT, UPDATE ON dml_only.* TO 'app'@'%'",
                "GRANT SELECT ON dml_only.gdid_authority TO 'nobody'@'%'",
            ],
        ));
        block_on(issues_as(&as_role(&root, "app", "dml_only")));
        block_on(refused_as(&as_role(&root, "nobody", "dml_only")));
    }
    assert!(ran || std::env::var("CI").is_err(), "no server ran");
}

async fn issues_as(url: &str) {
    let store = Store::open(url)
        .await
        .unwrap_or_else(|e| panic!("{url}: {e}"));
    let ids = store.block_generator("shop", "orders").build().unwrap();
    let first = ids.next_id().await.unwrap();
    assert!(ids.next_id().await.unwrap() > first);
    let invoices = store.one_at_a_time("billing", "invoices");
    assert_eq!(invoices.next_id().await.unwrap(), 1);
    assert_eq!(invoices.next_id().await.unwrap(), 2);
}

async fn refused_as(url: &str) {
    let refused = Store::open(url).await.unwrap_err().to_string();
    assert!(
        refused.contains("gdid schema apply") && refused.contains("SELECT, INSERT, UPDATE"),
        "{refused}"
    );
}

/// Tables a role without a DBA's trust made, or that carry a trigger, are refused before any
/// row is written: mallory's tables, with a trigger, in a schema on the victim's path.
#[test]
fn tables_of_an_untrusted_owner_or_with_a_trigger_are_refused() {
    let Some(dba) = postgres_database("planted") else {
        return;
    };
    block_on(run_as_dba(
        &dba,
        &[
            "CREATE ROLE mallory LOGIN PASSWORD 'pw'",
            "CREATE ROLE victim LOGIN PASSWORD 'pw'",
            "CREATE SCHEMA shared AUTHORIZATION mallory",
            "GRANT USAGE ON SCHEMA shared TO victim",
            "ALTER ROLE victim SET search_path = shared",
        ],
    ));
    let mallory = as_role(&dba, "mallory", "planted");
    gdid(&[
        "schema",
        "apply",
        "--store",
        &format!("{mallory}?schema=shared"),
    ]);
    block_on(run_as_dba(
        &mallory,
        &["GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA shared TO victim"],
    ));
    let victim = as_role(&dba, "victim", "planted");
    let refused = block_on(Store::open(&victim)).unwrap_err().to_string();
    assert!(refused.contains("owned by role \"mallory\""), "{refused}");
    // Owned by the DBA, but with mallory's trigger.
    block_on(run_as_dba(
        &dba,
        &[
            "ALTER TABLE shared.gdid_authority OWNER TO postgres",
            "ALTER TABLE shared.gdid_counters OWNER TO postgres",
            "CREATE FUNCTION shared.hook() RETURNS trigger LANGUAGE plpgsql \
             AS 'BEGIN RETURN NEW; END'",
            "CREATE TRIGGER hook BEFORE INSERT ON shared.gdid_authority \
             FOR EACH ROW EXECUTE FUNCTION shared.hook()",
        ],
    ));
    let refused = block_on(Store::open(&victim)).unwrap_err().to_string();
    assert!(refused.contains("has a trigger"), "{refused}");
}

/// A role whose `synchronous_commit` is `off`: its reservation is on disk when the call
/// returns. The server's WAL writer flushes only every 10 s here, so an asynchronous commit
/// would leave the flush position behind the reservation.
#[test]
fn a_reservation_is_flushed_whatever_the_roles_synchronous_commit() {
    if let Err(why) = PostgresReplicas::installed() {
        gdid_testkit::unavailable("PostgreSQL", &why);
        return;
    }
    gdid_testkit::ran("PostgreSQL");
    let server = PostgresReplicas::start_with(&["wal_writer_delay=10s"]).unwrap();
    for statement in [
        "CREATE ROLE hasty LOGIN",
        "ALTER ROLE hasty SET synchronous_commit = off",
        "GRANT CREATE ON SCHEMA public TO hasty",
    ] {
        server.query(0, statement).unwrap();
    }
    let url = server.url(0).replace("postgres@", "hasty@");
    block_on(async {
        let store = Store::open(&url).await.unwrap();
        let mut hasty = sqlx::PgConnection::connect(&url).await.unwrap();
        let setting: String = sqlx::query_scalar("SHOW synchronous_commit")
            .fetch_one(&mut hasty)
            .await
            .unwrap();
        assert_eq!(
            setting, "off",
            "the role's setting is in force for its sessions"
        );
        for sequence in ["first", "second", "third"] {
            let before = server
                .query(0, "SELECT pg_current_wal_insert_lsn()")
                .unwrap();
            let ids = store.block_generator("shop", sequence).build().unwrap();
            ids.next_id().await.unwrap();
            let flushed = server
                .query(
                    0,
                    &format!("SELECT pg_current_wal_flush_lsn() > '{before}'::pg_lsn"),
                )
                .unwrap();
            assert_eq!(
                flushed, "t",
                "{sequence}: the reservation after {before} is not flushed"
            );
        }
    });
}
