//! One BSON form by every path, against the server of `GDID_MONGODB_URI`: the
//! same id written by the driver from a plain struct field, by `doc!`, by
//! `bson::serialize_to_document` and by the `gdid_core::bson::binary` helper is one value to a
//! unique index (every second insert is a duplicate key) and to a query; and what earlier
//! versions wrote (a string, a generic binary) still reads back into a `Gdid` field. Without the
//! variable the tests say they are skipped; with `CI=true` that is a failure.

mod common;

use bson::spec::BinarySubtype;
use bson::{Binary, Bson, Document, doc};
use common::{database, fresh};
use gdid_core::Gdid;
use gdid_mongo::{ensure_unique_index, is_duplicate_key};
use mongodb::Database;
use serde::{Deserialize, Serialize};

/// A struct keyed by a plain `Gdid`: no attribute but the name.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Keyed {
    #[serde(rename = "_id")]
    id: Gdid,
}

/// The same, through the helper.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct KeyedByHelper {
    #[serde(rename = "_id", with = "gdid_core::bson::binary")]
    id: Gdid,
}

/// A plain `Gdid` in a field of its own (the server gives the `_id`), under a unique index.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Referencing {
    reference: Gdid,
}

/// The same, through the helper.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct ReferencingByHelper {
    #[serde(with = "gdid_core::bson::binary")]
    reference: Gdid,
}

/// How a user writes an id.
#[derive(Debug, Clone, Copy)]
enum Path {
    /// `collection.insert_one(value)` of a struct with a plain `Gdid` field (bson's raw serializer).
    Driver,
    /// `doc! { field: id }` (`From<Gdid> for Bson`).
    Macro,
    /// `bson::serialize_to_document(&value)` (bson's document serializer), then `insert_one`.
    Document,
    /// `#[serde(with = "gdid_core::bson::binary")]`, through the driver.
    Helper,
}

const PATHS: [Path; 4] = [Path::Driver, Path::Macro, Path::Document, Path::Helper];

/// The field that holds the id: `_id`, or `reference` under a unique index.
#[derive(Debug, Clone, Copy)]
enum Field {
    Id,
    Reference,
}

impl Field {
    fn name(self) -> &'static str {
        match self {
            Field::Id => "_id",
            Field::Reference => "reference",
        }
    }
}

/// Inserts `id` into `field` of `collection` by `path`.
async fn insert(
    db: &Database,
    collection: &str,
    path: Path,
    field: Field,
    id: Gdid,
) -> mongodb::error::Result<()> {
    let documents = db.collection::<Document>(collection);
    match (path, field) {
        (Path::Driver, Field::Id) => {
            db.collection(collection).insert_one(Keyed { id }).await?;
        }
        (Path::Driver, Field::Reference) => {
            db.collection(collection)
                .insert_one(Referencing { reference: id })
                .await?;
        }
        (Path::Macro, field) => {
            documents.insert_one(doc! { field.name(): id }).await?;
        }
        (Path::Document, Field::Id) => {
            let document = bson::serialize_to_document(&Keyed { id }).unwrap();
            documents.insert_one(document).await?;
        }
        (Path::Document, Field::Reference) => {
            let document = bson::serialize_to_document(&Referencing { reference: id }).unwrap();
            documents.insert_one(document).await?;
        }
        (Path::Helper, Field::Id) => {
            db.collection(collection)
                .insert_one(KeyedByHelper { id })
                .await?;
        }
        (Path::Helper, Field::Reference) => {
            db.collection(collection)
                .insert_one(ReferencingByHelper { reference: id })
                .await?;
        }
    }
    Ok(())
}

/// For each path first: it writes, every path after it is a duplicate key, one document holds the
/// id, as a `Binary` of subtype 0x80, and a query by the id (in `doc!`) finds it.
async fn one_value_whichever_path_wrote_it(field: Field) {
    let Some(db) = database().await else { return };
    for (n, first) in PATHS.into_iter().enumerate() {
        let collection = fresh(&format!(
            "forms_{}_{n}",
            field.name().trim_start_matches('_')
        ));
        if let Field::Reference = field {
            ensure_unique_index(&db.collection::<Document>(&collection), "reference")
                .await
                .unwrap();
        }
        let id = Gdid::from_parts(7, 3, 1_000 + u64::try_from(n).unwrap()).unwrap();
        insert(&db, &collection, first, field, id)
            .await
            .unwrap_or_else(|e| panic!("{first:?} first: {e}"));
        for second in PATHS {
            let err = insert(&db, &collection, second, field, id)
                .await
                .expect_err(&format!(
                    "{second:?} after {first:?} must be a duplicate key"
                ));
            assert!(is_duplicate_key(&err), "{second:?} after {first:?}: {err}");
        }

        let documents = db.collection::<Document>(&collection);
        let filter = doc! { field.name(): id };
        assert_eq!(documents.count_documents(filter.clone()).await.unwrap(), 1);
        let stored = documents.find_one(filter.clone()).await.unwrap().unwrap();
        let Some(Bson::Binary(binary)) = stored.get(field.name()) else {
            panic!("{first:?}: the id is not a Binary: {stored}")
        };
        assert_eq!(
            binary.subtype,
            BinarySubtype::UserDefined(0x80),
            "{first:?}"
        );
        assert_eq!(binary.bytes, id.as_bytes(), "{first:?}");

        // Read back into plain fields and helper fields alike.
        match field {
            Field::Id => {
                let plain = db.collection::<Keyed>(&collection);
                assert_eq!(
                    plain.find_one(filter.clone()).await.unwrap(),
                    Some(Keyed { id })
                );
                let helper = db.collection::<KeyedByHelper>(&collection);
                assert_eq!(
                    helper.find_one(filter).await.unwrap(),
                    Some(KeyedByHelper { id })
                );
            }
            Field::Reference => {
                let plain = db.collection::<Referencing>(&collection);
                assert_eq!(
                    plain.find_one(filter.clone()).await.unwrap(),
                    Some(Referencing { reference: id })
                );
                let helper = db.collection::<ReferencingByHelper>(&collection);
                assert_eq!(
                    helper.find_one(filter).await.unwrap(),
                    Some(ReferencingByHelper { reference: id })
                );
            }
        }
    }
}

#[tokio::test]
async fn every_path_writes_one_id_value_by_id() {
    one_value_whichever_path_wrote_it(Field::Id).await;
}

#[tokio::test]
async fn every_path_writes_one_id_value_under_a_unique_index() {
    one_value_whichever_path_wrote_it(Field::Reference).await;
}

/// Documents written before (colon or hex text, a generic binary) or by NFX/Azos (0x80), side by
/// side in one collection all read back into a plain `Gdid` field as the
/// same id.
#[tokio::test]
async fn every_stored_form_reads_back() {
    let Some(db) = database().await else { return };
    let collection = fresh("old_forms");
    let id: Gdid = "1293:3:57".parse().unwrap();
    let forms = [
        Bson::String("1293:3:57".into()),
        Bson::String("0000050d3000000000000039".into()),
        Bson::Binary(Binary {
            subtype: BinarySubtype::Generic,
            bytes: id.to_bytes().to_vec(),
        }),
        Bson::from(id),
    ];
    let documents = db.collection::<Document>(&collection);
    for (n, form) in forms.iter().enumerate() {
        documents
            .insert_one(doc! { "n": i32::try_from(n).unwrap(), "reference": form.clone() })
            .await
            .unwrap();
    }
    #[derive(Deserialize, Debug, PartialEq)]
    struct Stored {
        n: i32,
        reference: Gdid,
    }
    let mut cursor = db
        .collection::<Stored>(&collection)
        .find(doc! {})
        .sort(doc! { "n": 1 })
        .await
        .unwrap();
    let mut read = Vec::new();
    while cursor.advance().await.unwrap() {
        read.push(cursor.deserialize_current().unwrap());
    }
    let expected: Vec<Stored> = (0..forms.len())
        .map(|n| Stored {
            n: i32::try_from(n).unwrap(),
            reference: id,
        })
        .collect();
    assert_eq!(read, expected);
}

/// `Option<Gdid>`: `None` is stored as `Null` and found by `{ field: null }`; both read back.
#[tokio::test]
async fn a_nullable_id_is_null_or_the_binary() {
    let Some(db) = database().await else { return };
    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Node {
        #[serde(rename = "_id")]
        id: Gdid,
        parent: Option<Gdid>,
    }
    let nodes = db.collection::<Node>(&fresh("nodes"));
    let root = Node {
        id: "1:1:1".parse().unwrap(),
        parent: None,
    };
    let child = Node {
        id: "1:1:2".parse().unwrap(),
        parent: Some(root.id),
    };
    nodes.insert_many([&root, &child]).await.unwrap();
    assert_eq!(
        nodes.find_one(doc! { "parent": null }).await.unwrap(),
        Some(root)
    );
    assert_eq!(
        nodes
            .find_one(doc! { "parent": Bson::from(child.parent) })
            .await
            .unwrap(),
        Some(child)
    );
}

/// Why one form matters: to a unique index the colon text, the hex text and the binary of one id
/// are three values. (MongoDB also tells binary subtypes apart; the project's test server,
/// SecantusDB, compares the bytes only, so generic and 0x80 binaries are not checked here.)
#[tokio::test]
async fn a_unique_index_takes_each_form_for_a_value_of_its_own() {
    let Some(db) = database().await else { return };
    let documents = db.collection::<Document>(&fresh("two_values"));
    ensure_unique_index(&documents, "reference").await.unwrap();
    let id: Gdid = "1293:3:57".parse().unwrap();
    for form in [
        Bson::String(id.to_string()),
        Bson::String(format!("{id:x}")),
        Bson::from(id),
    ] {
        documents
            .insert_one(doc! { "reference": form.clone() })
            .await
            .unwrap_or_else(|e| panic!("{form}: {e}"));
    }
}
