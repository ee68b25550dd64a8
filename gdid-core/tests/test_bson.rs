#![cfg(feature = "bson")]
//! BSON: both of bson's serializers write the same `Binary` of subtype 0x80.

use std::fmt::Debug;

use bson::oid::ObjectId;
use bson::spec::BinarySubtype;
use bson::{Binary, Bson, RawDocumentBuf, doc};
use gdid_core::Gdid;
use gdid_core::bson::{BINARY_SUBTYPE, BsonError};
use serde::de::DeserializeOwned;
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

/// `document` deserializes into `value`.
fn assert_reads_back<T: DeserializeOwned + PartialEq + Debug>(document: bson::Document, value: &T) {
    assert_eq!(
        &bson::deserialize_from_document::<T>(document).unwrap(),
        value
    );
}

/// The BSON `bytes` deserialize into `value`.
fn assert_reads_back_from_bytes<T: DeserializeOwned + PartialEq + Debug>(bytes: &[u8], value: &T) {
    assert_eq!(&bson::deserialize_from_slice::<T>(bytes).unwrap(), value);
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
    assert_reads_back(document, &o);
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
    assert_reads_back_from_bytes(&raw, &o);
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

/// One struct of plain fields: no attribute anywhere.
#[derive(Serialize, Deserialize, Debug, PartialEq, Clone)]
struct Plain {
    #[serde(rename = "_id")]
    id: Gdid,
    parent: Option<Gdid>,
    children: Vec<Gdid>,
}

fn plain() -> Plain {
    Plain {
        id: "1:2:3".parse().unwrap(),
        parent: Some("1:2:1".parse().unwrap()),
        children: vec!["1:2:4".parse().unwrap(), Gdid::MAX],
    }
}

fn expected_plain_document(p: &Plain) -> bson::Document {
    doc! {
        "_id": expected_binary(p.id),
        "parent": expected_binary(p.parent.unwrap()),
        "children": p.children.iter().map(|id| Bson::Binary(expected_binary(*id))).collect::<Vec<_>>(),
    }
}

#[test]
fn a_plain_field_is_a_0x80_binary_in_the_document_serializer() {
    let p = plain();
    let document = bson::serialize_to_document(&p).unwrap();
    assert_eq!(document, expected_plain_document(&p));
    assert_eq!(bson::serialize_to_bson(&p.id).unwrap(), Bson::from(p.id));
    assert_reads_back(document, &p);
}

#[test]
fn a_plain_field_is_a_0x80_binary_in_the_raw_serializer_the_drivers() {
    let p = plain();
    let raw = bson::serialize_to_raw_document_buf(&p).unwrap();
    assert_eq!(
        bson::Document::try_from(&*raw).unwrap(),
        expected_plain_document(&p),
        "the raw serializer (insert_one's) must write what the document serializer writes"
    );
    let bytes = bson::serialize_to_vec(&p).unwrap();
    assert_eq!(bytes, raw.as_bytes());
    assert_reads_back_from_bytes(&bytes, &p);
    assert_reads_back_from_bytes(raw.as_bytes(), &p);
}

#[test]
fn every_writing_path_gives_the_same_bytes() {
    let id: Gdid = "1293:3:57".parse().unwrap();
    #[derive(Serialize)]
    struct PlainId {
        #[serde(rename = "_id")]
        id: Gdid,
    }
    #[derive(Serialize)]
    struct HelperId {
        #[serde(rename = "_id", with = "gdid_core::bson::binary")]
        id: Gdid,
    }
    let by_macro = doc! { "_id": id };
    let paths = [
        bson::serialize_to_document(&PlainId { id }).unwrap(),
        bson::Document::try_from(bson::serialize_to_raw_document_buf(&PlainId { id }).unwrap())
            .unwrap(),
        bson::serialize_to_document(&HelperId { id }).unwrap(),
        bson::Document::try_from(bson::serialize_to_raw_document_buf(&HelperId { id }).unwrap())
            .unwrap(),
    ];
    for document in paths {
        assert_eq!(document, by_macro);
    }
}

#[test]
fn other_formats_keep_their_forms() {
    let json = serde_json::to_string(&plain()).unwrap();
    assert_eq!(
        json,
        r#"{"_id":"1:2:3","parent":"1:2:1","children":["1:2:4","4294967295:15:1152921504606846975"]}"#
    );
    assert_eq!(serde_json::from_str::<Plain>(&json).unwrap(), plain());
}

/// What earlier versions wrote (colon or hex text, generic binary), what NFX/Azos write (0x80) and
/// ObjectId keys: all read back into a plain field, by both deserializers.
#[test]
fn every_stored_form_reads_back_into_a_plain_field() {
    let id: Gdid = "1293:3:57".parse().unwrap();
    let generic = Binary {
        subtype: BinarySubtype::Generic,
        bytes: id.to_bytes().to_vec(),
    };
    let oid = ObjectId::from_bytes(id.to_bytes());
    let forms = [
        Bson::String("1293:3:57".into()),
        Bson::String("0000050d3000000000000039".into()),
        Bson::Binary(generic),
        Bson::Binary(expected_binary(id)),
        Bson::ObjectId(oid),
    ];
    for form in forms {
        let document =
            doc! { "_id": form.clone(), "parent": form.clone(), "children": [form.clone()] };
        let expected = Plain {
            id,
            parent: Some(id),
            children: vec![id],
        };
        let raw = bson::serialize_to_vec(&document).unwrap();
        assert_eq!(
            bson::deserialize_from_slice::<Plain>(&raw).unwrap(),
            expected,
            "raw, {form:?}"
        );
        assert_eq!(
            bson::deserialize_from_document::<Plain>(document).unwrap(),
            expected,
            "document, {form:?}"
        );
    }
}

#[test]
fn a_plain_field_rejects_what_is_not_a_gdid() {
    let uuid = Binary {
        subtype: BinarySubtype::Uuid,
        bytes: vec![0; 16],
    };
    let cases = [
        (Bson::Binary(uuid), "binary subtype 0x04 is not a GDID"),
        (
            Bson::Binary(Binary {
                subtype: BINARY_SUBTYPE,
                bytes: vec![1; 13],
            }),
            "expected 12 bytes, found 13",
        ),
        (Bson::String("1:16:1".into()), "out of range"),
        (Bson::Int32(7), "invalid type"),
        (
            Bson::Document(doc! { "a": 1 }),
            "EmbeddedDocument is not a GDID",
        ),
    ];
    for (value, message) in cases {
        let document = doc! { "_id": value.clone(), "parent": null, "children": [] };
        let raw = bson::serialize_to_vec(&document).unwrap();
        let err = bson::deserialize_from_slice::<Plain>(&raw).unwrap_err();
        assert!(err.to_string().contains(message), "raw, {value:?}: {err}");
        let err = bson::deserialize_from_document::<Plain>(document).unwrap_err();
        assert!(
            err.to_string().contains(message),
            "document, {value:?}: {err}"
        );
    }
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Nullable {
    plain: Option<Gdid>,
    #[serde(default, with = "gdid_core::bson::binary::option")]
    helper: Option<Gdid>,
    #[serde(with = "gdid_core::serde::zero_as_none")]
    azos: Option<Gdid>,
}

#[test]
fn none_is_null_and_null_is_none() {
    let none = Nullable {
        plain: None,
        helper: None,
        azos: None,
    };
    let document = bson::serialize_to_document(&none).unwrap();
    assert_eq!(
        document,
        doc! { "plain": null, "helper": null, "azos": Gdid::ZERO }
    );
    let raw = bson::serialize_to_vec(&none).unwrap();
    assert_eq!(
        bson::Document::try_from(RawDocumentBuf::from_bytes(raw.clone()).unwrap()).unwrap(),
        document
    );
    assert_reads_back_from_bytes(&raw, &none);
    assert_reads_back(document, &none);
    // Null reads as None even where ZERO is the convention; a missing helper field too.
    let nulls = doc! { "plain": null, "azos": null };
    assert_reads_back(nulls.clone(), &none);
    let raw = bson::serialize_to_vec(&nulls).unwrap();
    assert_reads_back_from_bytes(&raw, &none);

    let id: Gdid = "9:1:9".parse().unwrap();
    let some = Nullable {
        plain: Some(id),
        helper: Some(id),
        azos: Some(id),
    };
    let document = bson::serialize_to_document(&some).unwrap();
    assert_eq!(document, doc! { "plain": id, "helper": id, "azos": id });
    let raw = bson::serialize_to_vec(&some).unwrap();
    assert_reads_back_from_bytes(&raw, &some);
    assert_reads_back(document, &some);
    // A plain Option keeps Some(ZERO) apart from None; only the explicit helper does not.
    let zero = Nullable {
        plain: Some(Gdid::ZERO),
        helper: Some(Gdid::ZERO),
        azos: Some(Gdid::ZERO),
    };
    let back =
        bson::deserialize_from_document::<Nullable>(bson::serialize_to_document(&zero).unwrap())
            .unwrap();
    assert_eq!(back, Nullable { azos: None, ..zero });
}

#[test]
fn option_conversions() {
    use gdid_core::bson::{option_from_bson, option_from_raw};
    let id: Gdid = "3:3:3".parse().unwrap();
    assert_eq!(Bson::from(Some(id)), Bson::from(id));
    assert_eq!(Bson::from(None::<Gdid>), Bson::Null);
    assert_eq!(option_from_bson(&Bson::Null), Ok(None));
    assert_eq!(option_from_bson(&Bson::from(id)), Ok(Some(id)));
    assert_eq!(
        option_from_bson(&Bson::Int64(1)),
        Err(BsonError::ElementType {
            found: bson::spec::ElementType::Int64
        })
    );
    let raw = bson::rawdoc! { "none": null, "some": Binary::from(id), "bad": 1_i32 };
    assert_eq!(option_from_raw(raw.get("none").unwrap().unwrap()), Ok(None));
    assert_eq!(
        option_from_raw(raw.get("some").unwrap().unwrap()),
        Ok(Some(id))
    );
    assert!(option_from_raw(raw.get("bad").unwrap().unwrap()).is_err());
}

/// BSON keys are strings and a GDID is a binary: a map keyed by `Gdid` is an error from both
/// serializers (it used to be the colon text from one and an error from the driver's). Key such
/// maps by `id.to_string()`.
#[test]
fn a_gdid_map_key_is_an_error_from_both_serializers() {
    #[derive(Serialize)]
    struct ByParent {
        counts: std::collections::BTreeMap<Gdid, i32>,
    }
    let value = ByParent {
        counts: [(Gdid::MAX, 1)].into(),
    };
    let err = bson::serialize_to_document(&value).unwrap_err();
    assert!(
        err.to_string().contains("invalid document key type"),
        "{err}"
    );
    assert!(bson::serialize_to_vec(&value).is_err());
}
