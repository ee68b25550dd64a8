//! UUIDs in BSON: a `Binary` of subtype 4 from both of bson's serializers, read back only from
//! that.
#![cfg(feature = "bson")]

use bson::spec::BinarySubtype;
use bson::{Binary, Bson, doc};
use gdid_uuid::{UuidV4Generator, UuidV7Generator};
use serde::{Deserialize, Serialize};
use uuid::Uuid;

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Session {
    #[serde(rename = "_id", with = "gdid_uuid::bson::binary")]
    id: Uuid,
    #[serde(with = "gdid_uuid::bson::binary_option", default)]
    parent: Option<Uuid>,
}

fn subtype_4(id: Uuid) -> Bson {
    Bson::Binary(Binary {
        subtype: BinarySubtype::Uuid,
        bytes: id.as_bytes().to_vec(),
    })
}

#[test]
fn both_serializers_write_subtype_4_and_read_it_back() {
    let v7 = UuidV7Generator::new();
    let session = Session {
        id: v7.generate().unwrap(),
        parent: Some(UuidV4Generator::new().generate()),
    };
    let expected =
        doc! { "_id": subtype_4(session.id), "parent": subtype_4(session.parent.unwrap()) };

    let document = bson::serialize_to_document(&session).unwrap();
    assert_eq!(document, expected);
    assert_eq!(
        bson::deserialize_from_document::<Session>(document).unwrap(),
        session
    );

    let raw = bson::serialize_to_vec(&session).unwrap();
    assert_eq!(
        bson::Document::from_reader(raw.as_slice()).unwrap(),
        expected
    );
    assert_eq!(
        bson::deserialize_from_slice::<Session>(&raw).unwrap(),
        session
    );
}

#[test]
fn none_is_null_and_a_missing_field_is_none() {
    let session = Session {
        id: UuidV4Generator::new().generate(),
        parent: None,
    };
    let document = bson::serialize_to_document(&session).unwrap();
    assert_eq!(document.get("parent"), Some(&Bson::Null));
    let raw = bson::serialize_to_vec(&session).unwrap();
    assert_eq!(
        bson::deserialize_from_slice::<Session>(&raw).unwrap(),
        session
    );
    let without = doc! { "_id": subtype_4(session.id) };
    assert_eq!(
        bson::deserialize_from_document::<Session>(without).unwrap(),
        session
    );
}

#[test]
fn a_uuid_string_reads_back_too() {
    let id = UuidV4Generator::new().generate();
    let written_by_uuids_own_serde = doc! { "_id": id.to_string() };
    let session: Session = bson::deserialize_from_document(written_by_uuids_own_serde).unwrap();
    assert_eq!(session.id, id);
}

#[test]
fn other_binaries_and_types_are_refused_not_guessed() {
    let id = UuidV4Generator::new().generate();
    let legacy =
        doc! { "_id": Binary { subtype: BinarySubtype::UuidOld, bytes: id.as_bytes().to_vec() } };
    let short = doc! { "_id": Binary { subtype: BinarySubtype::Uuid, bytes: vec![1; 15] } };
    let number = doc! { "_id": 42_i64 };
    for document in [legacy, short, number] {
        let raw = bson::serialize_to_vec(&document).unwrap();
        let from_document = bson::deserialize_from_document::<Session>(document.clone());
        let from_raw = bson::deserialize_from_slice::<Session>(&raw);
        assert!(from_document.is_err(), "{document}: {from_document:?}");
        assert!(from_raw.is_err(), "{document}: {from_raw:?}");
    }
}

#[test]
fn bsons_own_conversions_agree_with_the_helpers() {
    let id = UuidV7Generator::new().generate().unwrap();
    assert_eq!(Bson::from(id), subtype_4(id));
    let binary = Binary::from(id);
    assert_eq!(binary.to_uuid().unwrap().to_uuid_1(), id);
}
