//! BSON support (feature `bson`).
//!
//! A GDID is stored in BSON as a `Binary` of subtype [`BINARY_SUBTYPE`] (user-defined `0x80`)
//! holding its 12-byte form: what NFX/Azos write, compact, and sorted by MongoDB in id order.
//!
//! The plain serde impl cannot get there alone: bson's document serializer
//! (`serialize_to_document`) says it is human-readable and would write the colon text, while its
//! raw serializer (`serialize_to_vec`) says it is not and would write a generic (subtype 0)
//! binary. Use the [`binary`] helper on BSON-bound fields and both write the same `Binary`:
//!
//! ```
//! use bson::{doc, spec::BinarySubtype, Binary};
//! use gdid_core::Gdid;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Order {
//!     #[serde(rename = "_id", with = "gdid_core::bson::binary")]
//!     id: Gdid,
//!     total_cents: i64,
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let order = Order { id: "1293:3:57".parse()?, total_cents: 1999 };
//! let document = bson::serialize_to_document(&order)?;
//! let binary = Binary { subtype: BinarySubtype::UserDefined(0x80), bytes: order.id.to_bytes().to_vec() };
//! assert_eq!(document, doc! { "_id": binary, "total_cents": 1999_i64 });
//! assert_eq!(bson::deserialize_from_document::<Order>(document)?, order);
//! # Ok(())
//! # }
//! ```
//!
//! Reading is lenient where it cannot yield a wrong id: a `Binary` of subtype `0x80` or generic
//! (`0x00`) with 12 bytes, an `ObjectId` (its 12 bytes read as a GDID), or a string in either text
//! form. Anything else is a [`BsonError`].

use ::bson::oid::ObjectId;
use ::bson::spec::{BinarySubtype, ElementType};
use ::bson::{Binary, Bson, RawBinaryRef, RawBsonRef};

use crate::{Gdid, InvalidLength, ParseError};

/// The binary subtype GDIDs are stored with: user-defined `0x80`, as NFX/Azos do.
pub const BINARY_SUBTYPE: BinarySubtype = BinarySubtype::UserDefined(0x80);

/// A BSON value that does not hold a GDID.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum BsonError {
    /// A binary of a subtype other than `0x80` or generic.
    #[error("binary subtype {found:#04x} is not a GDID: expected 0x80 (or 0x00)")]
    Subtype {
        /// The subtype found.
        found: u8,
    },
    /// A binary of the wrong length.
    #[error("binary is not a GDID: {0}")]
    Length(#[from] InvalidLength),
    /// A string that is not a GDID.
    #[error("string is not a GDID: {0}")]
    Text(#[from] ParseError),
    /// An element of another type.
    #[error("BSON {found:?} is not a GDID: expected a binary, an ObjectId or a string")]
    ElementType {
        /// The element type found.
        found: ElementType,
    },
}

impl From<Gdid> for Binary {
    fn from(id: Gdid) -> Self {
        Binary {
            subtype: BINARY_SUBTYPE,
            bytes: id.to_bytes().to_vec(),
        }
    }
}

impl From<Gdid> for Bson {
    fn from(id: Gdid) -> Self {
        Bson::Binary(id.into())
    }
}

impl From<ObjectId> for Gdid {
    /// Reads the 12 bytes of an ObjectId as a GDID (how NFX/Azos treat ObjectId keys).
    fn from(oid: ObjectId) -> Self {
        Gdid::from_bytes(oid.bytes())
    }
}

impl TryFrom<RawBinaryRef<'_>> for Gdid {
    type Error = BsonError;

    fn try_from(binary: RawBinaryRef<'_>) -> Result<Self, Self::Error> {
        match binary.subtype {
            BINARY_SUBTYPE | BinarySubtype::Generic => Ok(Gdid::from_slice(binary.bytes)?),
            other => Err(BsonError::Subtype {
                found: other.into(),
            }),
        }
    }
}

impl TryFrom<&Binary> for Gdid {
    type Error = BsonError;

    fn try_from(binary: &Binary) -> Result<Self, Self::Error> {
        Gdid::try_from(binary.as_raw_binary())
    }
}

impl TryFrom<RawBsonRef<'_>> for Gdid {
    type Error = BsonError;

    fn try_from(value: RawBsonRef<'_>) -> Result<Self, Self::Error> {
        match value {
            RawBsonRef::Binary(binary) => Gdid::try_from(binary),
            RawBsonRef::ObjectId(oid) => Ok(oid.into()),
            RawBsonRef::String(text) => Ok(text.parse()?),
            other => Err(BsonError::ElementType {
                found: other.element_type(),
            }),
        }
    }
}

impl TryFrom<&Bson> for Gdid {
    type Error = BsonError;

    fn try_from(value: &Bson) -> Result<Self, Self::Error> {
        match value {
            Bson::Binary(binary) => Gdid::try_from(binary),
            Bson::ObjectId(oid) => Ok((*oid).into()),
            Bson::String(text) => Ok(text.parse()?),
            other => Err(BsonError::ElementType {
                found: other.element_type(),
            }),
        }
    }
}

/// `#[serde(with = "gdid_core::bson::binary")]`: the field is a `Binary` of subtype `0x80` in both
/// of bson's serializers, and reads back from a binary, an `ObjectId` or a string.
pub mod binary {
    use ::bson::{Binary, Bson};
    use ::serde::{Deserialize, Deserializer, Serialize, Serializer, de};

    use crate::Gdid;

    /// Serializes the id as a BSON `Binary` of subtype `0x80`.
    pub fn serialize<S: Serializer>(id: &Gdid, serializer: S) -> Result<S::Ok, S::Error> {
        Binary::from(*id).serialize(serializer)
    }

    /// Deserializes an id from a `Binary`, an `ObjectId` or a string.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Gdid, D::Error> {
        let value = Bson::deserialize(deserializer)?;
        Gdid::try_from(&value).map_err(de::Error::custom)
    }
}
