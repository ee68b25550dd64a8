#![cfg(feature = "sea-orm")]
//! sea-orm 2.0 on real servers: an entity whose primary key is a `Gdid` and whose `parent` is an
//! `Option<Gdid>`, its table created from the entity (`Schema::create_table_from_entity`:
//! MariaDB/MySQL `binary(12)`, PostgreSQL `bytea`, SQLite `blob`).
//!
//! Each test inserts ids through active models, reads them back (`find_by_id`, `order_by_asc`,
//! filters on the key and on NULL), and reads a value of 11 bytes, which must be an error carrying
//! `InvalidLength`. Reads `GDID_MYSQL_URL` and `GDID_POSTGRES_URL`; without them a test says it is
//! skipped, and with `CI=true` a missing server is a failure. SQLite runs on a temporary file. The
//! tables are `TEMPORARY` on a pool of one connection, so tests running at once never meet.

use gdid_core::{Gdid, InvalidLength};
use sea_orm::entity::prelude::*;
use sea_orm::{
    ConnectOptions, ConnectionTrait, Database, DatabaseConnection, QueryOrder, Schema, Set,
    Statement,
};

mod order {
    use gdid_core::Gdid;
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "gdid_orm_sea_orm_orders")]
    pub(crate) struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: Gdid,
        pub parent: Option<Gdid>,
        pub n: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub(crate) enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

mod common;

const ROWS: usize = 300;

/// A pool of one connection: the temporary table lives in it.
async fn connect(url: &str) -> DatabaseConnection {
    let mut options = ConnectOptions::new(url);
    options
        .max_connections(1)
        .min_connections(1)
        .sqlx_logging(false);
    Database::connect(options).await.unwrap()
}

/// A connection to the server `variable` names (as [`connect`]), or `None` when the test is
/// skipped.
async fn connect_to(variable: &str) -> Option<DatabaseConnection> {
    Some(connect(&gdid_testkit::server(variable)?).await)
}

/// The whole check; `eleven_bytes` is a SQL expression of an 11-byte binary value.
async fn round_trip_order_and_errors(db: &DatabaseConnection, eleven_bytes: &str) {
    let backend = db.get_database_backend();
    let create = Schema::new(backend)
        .create_table_from_entity(order::Entity)
        .temporary()
        .to_owned();
    db.execute(&create).await.unwrap();

    let ids = common::scrambled_ids(0x5ea0, ROWS);
    let models: Vec<order::Model> = ids
        .iter()
        .enumerate()
        .map(|(n, id)| order::Model {
            id: *id,
            parent: (n % 3 != 0).then(|| ids[n - 1]),
            n: i64::try_from(n).unwrap(),
        })
        .collect();
    for chunk in models.chunks(100) {
        order::Entity::insert_many(chunk.iter().map(|model| order::ActiveModel {
            id: Set(model.id),
            parent: Set(model.parent),
            n: Set(model.n),
        }))
        .exec_without_returning(db)
        .await
        .unwrap();
    }

    // ORDER BY id is Gdid order, every row intact, NULL parents included.
    let read = order::Entity::find()
        .order_by_asc(order::Column::Id)
        .all(db)
        .await
        .unwrap();
    let mut expected = models.clone();
    expected.sort_by_key(|model| model.id);
    assert_eq!(read, expected, "ORDER BY id must be Gdid order");

    // By primary key, by a range of the key, and by NULL.
    let probe = &models[ROWS / 2];
    let found = order::Entity::find_by_id(probe.id).one(db).await.unwrap();
    assert_eq!(found.as_ref(), Some(probe));
    let above = order::Entity::find()
        .filter(order::Column::Id.gt(probe.id))
        .count(db)
        .await
        .unwrap();
    let expected_above = models.iter().filter(|model| model.id > probe.id).count();
    assert_eq!(above, u64::try_from(expected_above).unwrap());
    let orphans = order::Entity::find()
        .filter(order::Column::Parent.is_null())
        .count(db)
        .await
        .unwrap();
    let expected_orphans = models.iter().filter(|model| model.parent.is_none()).count();
    assert_eq!(orphans, u64::try_from(expected_orphans).unwrap());
    assert!(orphans > 0);

    // An update of the nullable column to NULL and back.
    let mut active: order::ActiveModel = found.unwrap().into();
    active.parent = Set(None);
    let updated = active.update(db).await.unwrap();
    assert_eq!(updated.parent, None);
    let reread = order::Entity::find_by_id(probe.id).one(db).await.unwrap();
    assert_eq!(reread.unwrap().parent, None);

    // 11 bytes are an error carrying InvalidLength, never an id; NULL reads as None.
    let row = db
        .query_one_raw(Statement::from_string(
            backend,
            format!("SELECT {eleven_bytes} AS id, NULL AS no_id"),
        ))
        .await
        .unwrap()
        .unwrap();
    let err = row.try_get::<Gdid>("", "id").unwrap_err();
    match &err {
        DbErr::TryIntoErr { source, .. } => assert_eq!(
            source.downcast_ref::<InvalidLength>(),
            Some(&InvalidLength {
                expected: 12,
                found: 11
            }),
            "{err}"
        ),
        other => panic!("expected TryIntoErr, got {other:?}"),
    }
    assert!(
        err.to_string().contains("expected 12 bytes, found 11"),
        "{err}"
    );
    assert!(row.try_get::<Gdid>("", "no_id").is_err(), "NULL is no id");
}

#[tokio::test]
async fn sqlite_blob() {
    let url = gdid_testkit::sqlite_url("orm_sea_orm");
    let db = connect(&format!("{url}?mode=rwc")).await;
    round_trip_order_and_errors(&db, "X'0102030405060708090a0b'").await;
}

#[tokio::test]
async fn mysql_binary_12() {
    if let Some(db) = connect_to("GDID_MYSQL_URL").await {
        round_trip_order_and_errors(&db, "X'0102030405060708090a0b'").await;
    }
}

#[tokio::test]
async fn postgres_bytea() {
    if let Some(db) = connect_to("GDID_POSTGRES_URL").await {
        round_trip_order_and_errors(&db, "'\\x0102030405060708090a0b'::bytea").await;
    }
}
