//! What the SQL tests share: the servers to run on, fresh names, raw SQL for set-up.
#![allow(dead_code)] // each test file uses a part

use gdid_sql::SqlStore;

/// One URL per dialect that is configured here.
pub(crate) fn urls() -> Vec<(&'static str, String)> {
    let mut urls = Vec::new();
    for (name, var, built_in) in [
        ("mysql", "GDID_MYSQL_URL", cfg!(feature = "mysql")),
        ("postgres", "GDID_POSTGRES_URL", cfg!(feature = "postgres")),
    ] {
        // A driver whose feature is off is not tested (its URL would be refused).
        if !built_in {
            continue;
        }
        if let Some(url) = gdid_testkit::server(var) {
            urls.push((name, url));
        }
    }
    if !cfg!(feature = "sqlite") {
        return urls;
    }
    // One file per test process: every call of this function in it names the same database.
    let dir = std::env::temp_dir().join(format!("gdid-sql-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    gdid_testkit::ran("SQLite");
    urls.push((
        "sqlite",
        format!("sqlite:{}", dir.join("ids.sqlite").display()),
    ));
    urls
}

/// One URL per dialect configured here, each a database of its own for authority `number` (a
/// store records its number: tests of different numbers cannot share one). The same database in
/// every run for MariaDB and PostgreSQL; a new file for SQLite.
pub(crate) async fn urls_of_authority(number: u8) -> Vec<(&'static str, String)> {
    let mut urls = Vec::new();
    for (dialect, url) in self::urls() {
        let name = format!("gdid_authority_{number}");
        urls.push((dialect, gdid_testkit::database(&url, &name).await));
    }
    urls
}

/// A scope no earlier run has used, so that runs do not see each other's rows.
pub(crate) fn fresh_scope(test: &str) -> String {
    gdid_testkit::fresh(test)
}

/// Runs raw SQL on a store (test set-up only: values are formatted in). On PostgreSQL, in a
/// transaction whose `search_path` puts the store's schema first: the store's connections
/// resolve names with `pg_catalog` first, where a `CREATE` cannot go.
pub(crate) async fn execute(store: &SqlStore, sql: String) {
    let sql = sqlx::AssertSqlSafe(sql);
    #[cfg(feature = "postgres")]
    #[allow(irrefutable_let_patterns)] // with the PostgreSQL driver alone
    if let SqlStore::Postgres(pool, _) = store {
        let schema = store.schema().await.unwrap().unwrap();
        let mut transaction = pool.begin().await.unwrap();
        sqlx::query("SELECT set_config('search_path', quote_ident($1) || ', pg_catalog', true)")
            .bind(schema)
            .execute(&mut *transaction)
            .await
            .unwrap();
        sqlx::query(sql).execute(&mut *transaction).await.unwrap();
        transaction.commit().await.unwrap();
        return;
    }
    with_pool!(store, pool => sqlx::query(sql).execute(pool).await.map(drop)).unwrap();
}

/// The rows of a `SELECT` of three columns cast to text, formatted (the gdid tables qualified
/// with the store's schema).
pub(crate) async fn text_rows(store: &SqlStore, select: String) -> String {
    let select = sqlx::AssertSqlSafe(store.qualify(&select));
    let rows: Vec<(Option<String>, Option<String>, Option<String>)> =
        with_pool!(store, pool => sqlx::query_as(select).fetch_all(pool).await).unwrap();
    format!("{rows:?}")
}

/// The one integer a `SELECT COUNT(*) …` returns.
pub(crate) async fn count(store: &SqlStore, select: String) -> i64 {
    let select = sqlx::AssertSqlSafe(store.qualify(&select));
    with_pool!(store, pool => sqlx::query_scalar(select).fetch_one(pool).await).unwrap()
}

/// The rows of a `SELECT` of three integers.
pub(crate) async fn ranges(store: &SqlStore, select: String) -> Vec<(i64, i64, i64)> {
    let select = sqlx::AssertSqlSafe(store.qualify(&select));
    with_pool!(store, pool => sqlx::query_as(select).fetch_all(pool).await).unwrap()
}

/// Closes the store's pool: its connections end, and it opens none again.
pub(crate) async fn close(store: &SqlStore) {
    with_pool!(store, pool => pool.close().await);
}

/// Runs `$body` with `$pool` bound to a store's pool, for the drivers this build has:
/// `gdid_sql::with_pool!` is there only with all three (a macro of another crate cannot ask
/// which features are on; these tests are built with the crate's own).
macro_rules! with_pool {
    ($store:expr, $pool:ident => $body:expr) => {
        match $store {
            #[cfg(feature = "mysql")]
            gdid_sql::SqlStore::MySql($pool) => $body,
            #[cfg(feature = "postgres")]
            gdid_sql::SqlStore::Postgres($pool, _) => $body,
            #[cfg(feature = "sqlite")]
            gdid_sql::SqlStore::Sqlite($pool) => $body,
        }
    };
}
pub(crate) use with_pool;
