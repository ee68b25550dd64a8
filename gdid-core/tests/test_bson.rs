#![cfg(feature = "bson")]
//! BSON: both of bson's serializers write the same `Binary` of subtype 0x80.

use bson::oid::ObjectId;
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, RawDocumentBuf, doc};
use gdid_core::Gdid;
use gdid_core::bson::{BINARY_SUBTYPE, BsonError};
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Order {
    #[serde(rename = "_id", with = "gdid_core::bson::binary")]
    id: Gdid,
    customer: String,
    #[serde(with = "gdid_core::bson::binary")]
    customer_id: Gdid,
    total_cents: i64,
}

fn order() -> Order {
    Order {
        id: "1293:3:57".parse().unwrap(),
        customer: "Ada".into(),
        customer_id: "1293:1:4".parse().unwrap(),
        total_cents: 4200,
    }
}

fn expected_binary(id: Gdid) -> Binary {
    Binary {
        subtype: BinarySubtype::UserDefined(0x80),
        bytes: id.to_bytes().to_vec(),
    }
}

#[test]
fn the_document_serializer_writes_a_0x80_binary() {
    let o = order();
    let document = bson::serialize_to_document(&o).unwrap();
    assert_eq!(
        document,
        doc! {
            "_id": expected_binary(o.id),
            "customer": "Ada",
            "customer_id": expected_binary(o.customer_id),
            "total_cents": 4200_i64,
        }
    );
    assert_eq!(
        bson::deserialize_from_document::<Order>(document).unwrap(),
        o
    );
}

#[test]
fn the_raw_serializer_writes_the_same_bytes() {
    let o = order();
    let raw = bson::serialize_to_vec(&o).unwrap();
    let from_document = {
        let mut bytes = Vec::new();
        bson::serialize_to_document(&o)
            .unwrap()
            .to_writer(&mut bytes)
            .unwrap();
        bytes
    };
    assert_eq!(raw, from_document);
    let raw_doc = RawDocumentBuf::from_bytes(raw.clone()).unwrap();
    let id = raw_doc.get_binary("_id").unwrap();
    assert_eq!(id.subtype, BINARY_SUBTYPE);
    assert_eq!(id.bytes, o.id.as_bytes());
    assert_eq!(bson::deserialize_from_slice::<Order>(&raw).unwrap(), o);
}

#[test]
fn conversions_both_ways() {
    let id: Gdid = "7:15:1152921504606846975".parse().unwrap();
    let value = Bson::from(id);
    assert_eq!(value, Bson::Binary(expected_binary(id)));
    assert_eq!(Gdid::try_from(&value), Ok(id));
    let binary = Binary::from(id);
    assert_eq!(Gdid::try_from(&binary), Ok(id));
    assert_eq!(Gdid::try_from(binary.as_raw_binary()), Ok(id));
}

#[test]
fn an_object_id_reads_as_a_gdid() {
    let oid = ObjectId::parse_str("65a1b2c3d4e5f60718293a4b").unwrap();
    let id = Gdid::from(oid);
    assert_eq!(id.as_bytes(), &oid.bytes());
    assert_eq!(Gdid::try_from(&Bson::ObjectId(oid)), Ok(id));
    // And through the serde helper, from a document someone else wrote with ObjectId keys.
    let document = doc! { "_id": oid, "customer": "Bo", "customer_id": oid, "total_cents": 1_i64 };
    let o: Order = bson::deserialize_from_document(document).unwrap();
    assert_eq!(o.id, id);
}

#[test]
fn other_values_are_typed_errors() {
    let uuid_binary = Binary {
        subtype: BinarySubtype::Uuid,
        bytes: vec![0; 16],
    };
    assert_eq!(
        Gdid::try_from(&uuid_binary),
        Err(BsonError::Subtype { found: 4 })
    );
    let short = Binary {
        subtype: BINARY_SUBTYPE,
        bytes: vec![0; 11],
    };
    assert_eq!(
        Gdid::try_from(&short).unwrap_err().to_string(),
        "binary is not a GDID: expected 12 bytes, found 11"
    );
    assert_eq!(
        Gdid::try_from(&Bson::Int64(5)).unwrap_err().to_string(),
        "BSON Int64 is not a GDID: expected a binary, an ObjectId or a string"
    );
    assert!(matches!(
        Gdid::try_from(&Bson::String("1:99:1".into())),
        Err(BsonError::Text(_))
    ));
    let bad = doc! { "_id": 5_i32, "customer": "x", "customer_id": Bson::from(Gdid::ZERO), "total_cents": 1_i64 };
    let err = bson::deserialize_from_document::<Order>(bad).unwrap_err();
    assert!(err.to_string().contains("Int32 is not a GDID"), "{err}");
}

#[test]
fn the_plain_serde_impl_differs_between_serializers_which_is_why_the_helper_exists() {
    #[derive(Serialize)]
    struct Plain {
        id: Gdid,
    }
    let id: Gdid = "1:2:3".parse().unwrap();
    let document = bson::serialize_to_document(&Plain { id }).unwrap();
    assert_eq!(document.get("id"), Some(&Bson::String("1:2:3".into())));
    let raw = RawDocumentBuf::from_bytes(bson::serialize_to_vec(&Plain { id }).unwrap()).unwrap();
    assert_eq!(
        raw.get_binary("id").unwrap().subtype,
        BinarySubtype::Generic
    );
    // Both still read back as the same id.
    assert_eq!(Gdid::try_from(document.get("id").unwrap()), Ok(id));
    assert_eq!(Gdid::try_from(raw.get("id").unwrap().unwrap()), Ok(id));
}
