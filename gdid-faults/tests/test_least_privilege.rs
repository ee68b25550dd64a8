//! Stores as a real database's roles use them, on the suite's private servers: roles that are
//! not superusers, schemas of their own, an application role with only `SELECT, INSERT, UPDATE`
//! on the gdid tables (made by a DBA with `gdid schema apply`), a role whose
//! `synchronous_commit` is `off`, and tables planted by another role.
//!
//! Each database and role is made here, on servers of the suite's own: the machine's servers are
//! not changed. Build the command first (`cargo build -p gdid-cli`): some tests run `gdid`.

use std::path::Path;
use std::process::Command;

use gdid::{IdGenerator, Store};
use gdid_faults::server::{Engine, PostgresReplicas, Server};
use gdid_faults::{gdid_binary, planted};
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
    tried_gdid(args).unwrap_or_else(|failed| panic!("{failed}"))
}

/// `gdid` with `args`: its stdout, or what failed.
fn tried_gdid(args: &[&str]) -> Result<String, String> {
    let output = Command::new(gdid_binary().unwrap())
        .args(args)
        .output()
        .unwrap();
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        return Err(format!("gdid {args:?}: {stderr}"));
    }
    Ok(String::from_utf8(output.stdout).unwrap())
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
/// On MariaDB, the same user then finds a store's sessions its own whatever the server's
/// globals ([`a_mysql_store_keeps_its_session_whatever_the_servers_globals`]), and a view in
/// place of a gdid table refused ([`a_view_in_place_of_a_mysql_gdid_table_is_refused`]).
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
        a_mysql_store_keeps_its_session_whatever_the_servers_globals(&dba);
        a_view_in_place_of_a_mysql_gdid_table_is_refused(&dba);
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

/// Why opening a store on `url` is refused (a panic when it opens).
fn refusal(url: &str) -> String {
    match block_on(Store::open(url)) {
        Ok(_) => panic!("{url}: opened, where it should have been refused"),
        Err(error) => error.to_string(),
    }
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
    let refused = refusal(&victim);
    assert!(refused.contains("owned by role \"mallory\""), "{refused}");
    // The schema and the tables owned by the DBA, but with mallory's trigger.
    block_on(run_as_dba(
        &dba,
        &[
            "ALTER SCHEMA shared OWNER TO postgres",
            "ALTER TABLE shared.gdid_authority OWNER TO postgres",
            "ALTER TABLE shared.gdid_counters OWNER TO postgres",
            "CREATE FUNCTION shared.hook() RETURNS trigger LANGUAGE plpgsql \
             AS 'BEGIN RETURN NEW; END'",
            "CREATE TRIGGER hook BEFORE INSERT ON shared.gdid_authority \
             FOR EACH ROW EXECUTE FUNCTION shared.hook()",
        ],
    ));
    let refused = refusal(&victim);
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

/// The `gdid` commands of a conformance run on `store` as a role that may (`ddl`) or may not
/// make the tables: every strategy that keeps its state in SQL, and the operator's commands, on
/// sequences named after `tag`. Each command that failed, said how, the run going on.
fn conformance_run(store: &str, ddl: bool, tag: &str) -> Vec<String> {
    let failed = std::cell::RefCell::new(Vec::new());
    // Each command's arguments, split at spaces (no URL of these has one).
    let run = |command: &str| {
        let args: Vec<&str> = command.split_whitespace().collect();
        tried_gdid(&args).unwrap_or_else(|error| {
            failed.borrow_mut().push(error);
            String::new()
        })
    };
    if ddl {
        run(&format!("schema apply --store {store}"));
    }
    for (strategy, sequence) in [
        ("gdid", "orders"),
        ("one-at-a-time", "invoices"),
        ("sharded", "tickets"),
    ] {
        run(&format!(
            "next --store {store} --strategy {strategy} --scope shop --sequence {sequence}_{tag} \
             --count 3"
        ));
    }
    run(&format!(
        "agent --store {store} --sequence receipts_{tag} --min-open-windows 1 --window-size 100 \
         --keep-used-windows 1"
    ));
    run(&format!(
        "next --store {store} --strategy window --scope shop --sequence receipts_{tag} --count 3"
    ));
    run(&format!("sequences list --store {store}"));
    let shown = run(&format!(
        "sequences show --store {store} --scope shop --sequence orders_{tag}"
    ));
    // Its era: the fourth column of the row under the header (an earlier run's fence moved it).
    let era = shown
        .lines()
        .nth(1)
        .and_then(|row| row.split_whitespace().nth(3))
        .unwrap_or("0");
    run(&format!(
        "sequences set-floor --store {store} --scope shop --sequence orders_{tag} --era {era} \
         --at 1000"
    ));
    run(&format!(
        "sequences set-floor --store {store} --scope shop --sequence invoices_{tag} --counter \
         --at 1000"
    ));
    run(&format!("sequences fence --store {store} --all"));
    run(&format!("check --store {store}"));
    failed.into_inner()
}

/// Every statement text the private server `log` logged since byte `from`.
fn logged_since(log: &Path, from: u64) -> Vec<String> {
    let text = std::fs::read(log).unwrap();
    let from = usize::try_from(from).unwrap().min(text.len());
    planted::logged_statements(&String::from_utf8_lossy(&text[from..]))
}

fn log_length(log: &Path) -> u64 {
    std::fs::metadata(log).map_or(0, |m| m.len())
}

/// The class of "an exact-type operator in `public` beats `pg_catalog`'s": before any gdid
/// statement runs, a role with `CREATE` on `public` (the store's schema) plants an overload of
/// every operator and function the gdid statements use, for every combination of the argument
/// types they can present, each logging its caller and making its planter a superuser when a
/// superuser calls it. The operators and functions are read off the statements a first run
/// logged, so a statement added later is covered. The same run then goes again with the plants
/// in place as a superuser, as the database's owner and as an application role whose own
/// `search_path` puts `public` before `pg_catalog`: the log shows every statement of the first
/// run ran again, no planted object was called, and the planter is no superuser.
#[test]
fn no_operator_or_function_another_role_planted_runs_in_a_gdid_connection() {
    let Some(server) = private(Engine::Postgres) else {
        return;
    };
    let root = server.url().to_owned();
    block_on(run_as_dba(
        &root,
        &[
            "CREATE ROLE planter LOGIN PASSWORD 'pw'",
            "CREATE ROLE names_dba LOGIN PASSWORD 'pw'",
            "CREATE ROLE names_app LOGIN PASSWORD 'pw'",
            "ALTER ROLE names_app SET search_path = public, pg_catalog",
        ],
    ));
    let superuser = |database: &str| as_role(&root, "postgres", database).replace(":pw@", "@");
    let mut runs = Vec::new();
    for database in ["names_seen", "names_planted"] {
        block_on(run_as_dba(
            &root,
            &[
                &format!("CREATE DATABASE {database} OWNER names_dba"),
                &format!("ALTER DATABASE {database} SET log_statement = 'all'"),
            ],
        ));
        block_on(run_as_dba(
            &superuser(database),
            &[
                "SET log_statement = 'none'",
                "GRANT CREATE, USAGE ON SCHEMA public TO planter",
                "CREATE TABLE public.planted_calls (who text, what text)",
                "GRANT INSERT, SELECT ON public.planted_calls TO PUBLIC",
            ],
        ));
        if database == "names_planted" {
            let (seen, _): &(Vec<String>, Vec<String>) = &runs[0];
            let uses = planted::Uses::of(seen.iter().map(String::as_str));
            assert!(uses.operators.contains("="), "{uses:?}");
            let mut plant = vec![
                "SET log_statement = 'none'".to_owned(),
                "SET ROLE planter".to_owned(),
            ];
            plant.extend(uses.plant("public", "planter"));
            eprintln!(
                "{} statement texts use {} operators and {} functions: {} statements plant",
                seen.len(),
                uses.operators.len(),
                uses.functions.len(),
                plant.len() - 2
            );
            let plant: Vec<&str> = plant.iter().map(String::as_str).collect();
            block_on(run_as_dba(&superuser(database), &plant));
        }
        let from = log_length(&server.log());
        // The database's owner makes the tables; a superuser and an application use them.
        let mut failed = conformance_run(&as_role(&root, "names_dba", database), true, "dba");
        failed.extend(conformance_run(&superuser(database), true, "superuser"));
        block_on(run_as_dba(
            &superuser(database),
            &[
                "SET log_statement = 'none'",
                "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO names_app",
            ],
        ));
        failed.extend(conformance_run(
            &as_role(&root, "names_app", database),
            false,
            "app",
        ));
        assert!(
            database == "names_planted" || failed.is_empty(),
            "without plants: {failed:#?}"
        );
        runs.push((logged_since(&server.log(), from), failed));
    }
    let ((seen, _), (planted_run, failed)) = (&runs[0], &runs[1]);
    // What the plants did first: each is the attack itself.
    let promoted: bool = block_on(async {
        let mut connection = postgres_connection(&root).await;
        sqlx::query_scalar("SELECT rolsuper FROM pg_roles WHERE rolname = 'planter'")
            .fetch_one(&mut connection)
            .await
            .unwrap()
    });
    assert!(!promoted, "the planter became a superuser");
    let calls: Vec<(String, String)> = block_on(async {
        let mut connection = postgres_connection(&superuser("names_planted")).await;
        sqlx::query_as("SELECT who, what FROM public.planted_calls")
            .fetch_all(&mut connection)
            .await
            .unwrap()
    });
    assert!(calls.is_empty(), "planted objects ran: {calls:#?}");
    assert!(failed.is_empty(), "with the plants in place: {failed:#?}");
    assert!(
        seen.len() > 20,
        "the first run logged {} statements",
        seen.len()
    );
    let missing = planted::not_run_again(seen, planted_run);
    assert!(
        missing.is_empty(),
        "not run with the plants in place: {missing:#?}"
    );
}

/// On `dba` (a MariaDB user who may set globals), a server whose global `sql_mode` reads
/// literals and quotes otherwise (`NO_BACKSLASH_ESCAPES`, `ANSI_QUOTES`, no strict mode) and
/// whose global `autocommit` is 0: a store's sessions set their own (gdid_sql's `SQL_MODE`,
/// `autocommit = 1`), so its reservations commit and a second process goes on after the first's
/// ids. Before, the first process's reservations were rolled back when its connections closed,
/// and the second issued the same ids.
fn a_mysql_store_keeps_its_session_whatever_the_servers_globals(dba: &str) {
    block_on(run_as_dba(dba, &["CREATE DATABASE globals"]));
    let store = dba.replace("/dml_only", "/globals");
    block_on(run_as_dba(
        dba,
        &[
            "SET GLOBAL sql_mode = 'NO_BACKSLASH_ESCAPES,ANSI_QUOTES'",
            "SET GLOBAL autocommit = 0",
        ],
    ));
    let issued = std::panic::catch_unwind(|| {
        let first = gdid(&[
            "next",
            "--store",
            &store,
            "--sequence",
            "orders",
            "--count",
            "3",
        ]);
        let second = gdid(&[
            "next",
            "--store",
            &store,
            "--sequence",
            "orders",
            "--count",
            "3",
        ]);
        let modes: (String, i64) = block_on(async {
            let store = gdid_sql::SqlStore::connect(&store).await.unwrap();
            gdid_sql::with_pool!(&store, pool => {
                sqlx::query_as("SELECT @@SESSION.sql_mode, @@SESSION.autocommit")
                    .fetch_one(pool)
                    .await
            })
            .unwrap()
        });
        (first, second, modes)
    });
    block_on(run_as_dba(
        dba,
        &["SET GLOBAL sql_mode = DEFAULT", "SET GLOBAL autocommit = 1"],
    ));
    let (first, second, (sql_mode, autocommit)) =
        issued.unwrap_or_else(|e| std::panic::resume_unwind(e));
    let modes = |list: &str| {
        let mut modes: Vec<String> = list.split(',').map(str::to_owned).collect();
        modes.sort();
        modes
    };
    // The server lists the modes in an order of its own.
    assert_eq!(modes(&sql_mode), modes(gdid_sql::SQL_MODE));
    assert_eq!(autocommit, 1);
    let last_of_first = first.lines().last().unwrap();
    let first_of_second = second.lines().next().unwrap();
    let parse = |id: &str| id.parse::<gdid::Gdid>().unwrap();
    assert!(
        parse(first_of_second) > parse(last_of_first),
        "the second process issued {first_of_second} after {last_of_first}"
    );
}

/// On `dba`'s MariaDB, a view of a gdid table's name, made before the store's tables (by a user
/// with `CREATE VIEW` on the database): the store refuses it, where `CREATE TABLE IF NOT EXISTS`
/// would have skipped it and every reservation would have gone through the view's definer.
fn a_view_in_place_of_a_mysql_gdid_table_is_refused(dba: &str) {
    // The view has every column the store probes for: before, the store used it as its table.
    block_on(run_as_dba(
        dba,
        &["CREATE DATABASE elsewhere", "CREATE DATABASE viewed"],
    ));
    gdid(&[
        "schema",
        "apply",
        "--store",
        &dba.replace("/dml_only", "/elsewhere"),
    ]);
    block_on(run_as_dba(
        dba,
        &["CREATE VIEW viewed.gdid_counters AS SELECT * FROM elsewhere.gdid_counters"],
    ));
    let store = dba.replace("/dml_only", "/viewed");
    let refused = refusal(&store);
    assert!(
        refused.contains("the gdid table gdid_counters is not a table (VIEW)"),
        "{refused}"
    );
}

/// Trust cannot be handed out by a grant: tables owned by a role the store's role is merely a
/// member of are refused, and so is a schema owned by a role not trusted (its owner could drop
/// the tables, and the next open would make empty ones and issue every id again). The URL's
/// `owner=` names a role to trust.
#[test]
fn a_member_roles_tables_and_an_untrusted_schema_are_refused() {
    let Some(dba) = postgres_database("membership") else {
        return;
    };
    block_on(run_as_dba(
        &dba,
        &[
            "CREATE ROLE ms_owner LOGIN PASSWORD 'pw'",
            "CREATE ROLE ms_app LOGIN PASSWORD 'pw' IN ROLE ms_owner",
            "CREATE SCHEMA ms AUTHORIZATION ms_owner",
            "GRANT USAGE ON SCHEMA ms TO ms_app",
        ],
    ));
    let owner = as_role(&dba, "ms_owner", "membership");
    let app = as_role(&dba, "ms_app", "membership");
    // The schema's owner is neither a superuser, the database's owner nor the store's role.
    let refused = refusal(&format!("{app}?schema=ms"));
    assert!(
        refused.contains("schema \"ms\"") && refused.contains("owned by role \"ms_owner\""),
        "{refused}"
    );
    // Its owner's own store trusts it, and makes the tables.
    gdid(&["schema", "apply", "--store", &format!("{owner}?schema=ms")]);
    block_on(run_as_dba(
        &owner,
        &["GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA ms TO ms_app"],
    ));
    // ms_app is a member of ms_owner: not enough.
    let refused = refusal(&format!("{app}?schema=ms"));
    assert!(refused.contains("owned by role \"ms_owner\""), "{refused}");
    // Named by the DBA in the URL: trusted.
    block_on(issues_as(&format!("{app}?schema=ms&owner=ms_owner")));
}

/// A gdid table of a trusted owner is refused while a column default, a constraint, an index or
/// a column's type of it uses a function or a type outside `pg_catalog` (here one another role
/// owns, whose body that role may change at will): it would run at every reservation, whatever
/// the connection's `search_path`. Once it is gone, the store opens again.
#[test]
fn a_gdid_table_using_code_outside_pg_catalog_is_refused() {
    let Some(dba) = postgres_database("expressions") else {
        return;
    };
    block_on(run_as_dba(
        &dba,
        &[
            "CREATE ROLE ex_planter LOGIN PASSWORD 'pw'",
            "CREATE SCHEMA ex_code AUTHORIZATION ex_planter",
            "SET ROLE ex_planter",
            "CREATE FUNCTION ex_code.one() RETURNS integer LANGUAGE sql IMMUTABLE AS 'SELECT 1'",
            "CREATE FUNCTION ex_code.fine(integer) RETURNS boolean LANGUAGE sql IMMUTABLE \
             AS 'SELECT true'",
            "CREATE DOMAIN ex_code.small AS smallint CHECK (ex_code.fine(VALUE))",
            "RESET ROLE",
        ],
    ));
    gdid(&["schema", "apply", "--store", &dba]);
    block_on(issues_as(&dba));
    let table = "public.gdid_counters";
    for (plant, what, undo) in [
        (
            format!("ALTER TABLE {table} ADD COLUMN planted integer DEFAULT ex_code.one()"),
            "a column default that uses function ex_code.one()",
            format!("ALTER TABLE {table} DROP COLUMN planted"),
        ),
        (
            format!("ALTER TABLE {table} ADD CONSTRAINT planted CHECK (ex_code.fine(authority))"),
            "a constraint that uses function ex_code.fine(integer)",
            format!("ALTER TABLE {table} DROP CONSTRAINT planted"),
        ),
        (
            format!("CREATE INDEX planted ON {table} ((ex_code.fine(authority)))"),
            "an index that uses function ex_code.fine(integer)",
            "DROP INDEX public.planted".to_owned(),
        ),
        (
            format!("ALTER TABLE {table} ADD COLUMN planted ex_code.small"),
            "a column that uses type ex_code.small",
            format!("ALTER TABLE {table} DROP COLUMN planted"),
        ),
    ] {
        block_on(run_as_dba(&dba, &[&plant]));
        let refused = refusal(&dba);
        assert!(
            refused.contains("\"public\".gdid_counters") && refused.contains(what),
            "{plant}: {refused}"
        );
        block_on(run_as_dba(&dba, &[&undo]));
    }
    block_on(Store::open(&dba)).unwrap();
}
