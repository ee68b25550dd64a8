//! UUIDs in BSON (feature `bson`): a `Binary` of subtype 4, the form every MongoDB driver reads
//! as a UUID.
//!
//! `uuid::Uuid`'s own serde impl writes a string through bson's document serializer and a generic
//! (subtype 0) binary through its raw serializer. The [`binary`] and [`binary_option`] helpers
//! write a subtype 4 `Binary` through both. They read that back, and a UUID string (what
//! `uuid::Uuid`'s serde wrote); a legacy subtype 3 UUID, whose byte order depends on the driver that
//! wrote it, is refused rather than guessed, and so is anything else:
//!
//! ```
//! use bson::{Binary, doc, spec::BinarySubtype};
//! use serde::{Deserialize, Serialize};
//! use uuid::Uuid;
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Session {
//!     #[serde(rename = "_id", with = "gdid_uuid::bson::binary")]
//!     id: Uuid,
//!     #[serde(with = "gdid_uuid::bson::binary_option")]
//!     parent: Option<Uuid>,
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let id = gdid_uuid::UuidV7Generator::new().generate()?;
//! let session = Session { id, parent: None };
//! let document = bson::serialize_to_document(&session)?;
//! let binary = Binary { subtype: BinarySubtype::Uuid, bytes: id.as_bytes().to_vec() };
//! assert_eq!(document, doc! { "_id": binary, "parent": null });
//! assert_eq!(bson::deserialize_from_document::<Session>(document)?, session);
//! # Ok(())
//! # }
//! ```
//!
//! For values built by hand, bson itself converts (its `uuid-1` feature, which this feature turns
//! on): `bson::Binary::from(uuid)`, `bson::Bson::from(uuid)`, and
//! `binary.to_uuid()?.to_uuid_1()` back.

/// `#[serde(with = "gdid_uuid::bson::binary")]`: a `Uuid` field as a BSON `Binary` of subtype 4
/// in both of bson's serializers.
pub mod binary {
    use ::serde::{Deserialize, Deserializer, Serialize, Serializer};
    use uuid::Uuid;

    /// Serializes the UUID as a `Binary` of subtype 4.
    pub fn serialize<S: Serializer>(id: &Uuid, serializer: S) -> Result<S::Ok, S::Error> {
        ::bson::Uuid::from(*id).serialize(serializer)
    }

    /// Deserializes a UUID from a `Binary` of subtype 4 or a UUID string.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Uuid, D::Error> {
        ::bson::Uuid::deserialize(deserializer).map(Uuid::from)
    }
}

/// `#[serde(with = "gdid_uuid::bson::binary_option")]`: an `Option<Uuid>` field as a BSON
/// `Binary` of subtype 4, or `null`.
pub mod binary_option {
    use ::serde::{Deserialize, Deserializer, Serialize, Serializer};
    use uuid::Uuid;

    /// Serializes `Some` as a `Binary` of subtype 4 and `None` as `null`.
    pub fn serialize<S: Serializer>(id: &Option<Uuid>, serializer: S) -> Result<S::Ok, S::Error> {
        id.map(::bson::Uuid::from).serialize(serializer)
    }

    /// Deserializes a `Binary` of subtype 4 or a UUID string, or `null` (or a missing field,
    /// with `#[serde(default)]`) as `None`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Uuid>, D::Error> {
        Option::<::bson::Uuid>::deserialize(deserializer).map(|id| id.map(Uuid::from))
    }
}
