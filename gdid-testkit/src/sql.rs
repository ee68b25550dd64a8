//! Databases of their own for tests that need a store to themselves: an authority number is
//! recorded in its store, so tests that use other numbers than their neighbours, or that list
//! two stores together, cannot share the server's `test` database.

/// The URL of database `name` on the MySQL/MariaDB or PostgreSQL server of `url` (created if
/// missing); for a `sqlite:` URL, a file `name.sqlite` in a new temporary folder.
///
/// The same `name` gives the same database in every run: use one name per authority number (or
/// per set-up), so that what it records stays true across runs.
///
/// # Panics
///
/// When the database cannot be created (the server is the tests' own: a failure is a failed
/// test).
pub async fn database(url: &str, name: &str) -> String {
    if url.starts_with("sqlite:") {
        let dir = std::env::temp_dir().join(crate::fresh(name));
        std::fs::create_dir_all(&dir).expect("creating a temporary folder");
        return format!("sqlite:{}", dir.join(format!("{name}.sqlite")).display());
    }
    assert!(
        name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'),
        "database name {name:?}: letters, digits and _ only"
    );
    let (base, query) = url.split_once('?').map_or((url, ""), |(b, q)| (b, q));
    let server_end = base
        .find("://")
        .and_then(|scheme| base[scheme + 3..].find('/').map(|i| scheme + 3 + i))
        .unwrap_or(base.len());
    let with_query = |db: &str| {
        let suffix = if query.is_empty() {
            String::new()
        } else {
            format!("?{query}")
        };
        format!("{}/{db}{suffix}", &base[..server_end])
    };
    if url.starts_with("mysql://") || url.starts_with("mariadb://") {
        use sqlx::Connection;
        let mut connection = sqlx::MySqlConnection::connect(url)
            .await
            .expect("connecting to MariaDB");
        sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
            "CREATE DATABASE IF NOT EXISTS {name}"
        )))
        .execute(&mut connection)
        .await
        .expect("creating a MariaDB database");
    } else {
        use sqlx::Connection;
        let mut connection = sqlx::PgConnection::connect(url)
            .await
            .expect("connecting to PostgreSQL");
        let created = sqlx::raw_sql(sqlx::AssertSqlSafe(format!("CREATE DATABASE {name}")))
            .execute(&mut connection)
            .await;
        match created {
            Ok(_) => {}
            // 42P04: it exists; 23505: a concurrent CREATE DATABASE of the same name won.
            Err(sqlx::Error::Database(e))
                if matches!(e.code().as_deref(), Some("42P04") | Some("23505")) => {}
            Err(e) => panic!("creating a PostgreSQL database: {e}"),
        }
    }
    with_query(name)
}
