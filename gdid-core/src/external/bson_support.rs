//! BSON support (feature `bson`).
//!
//! A GDID is stored in BSON as a `Binary` of subtype [`BINARY_SUBTYPE`] (user-defined `0x80`)
//! holding its 12-byte form: what NFX/Azos write, compact, and sorted by MongoDB in id order.
//! Every path writes that one form, so a unique index never sees one id as two values:
//!
//! | path | writes |
//! |---|---|
//! | a plain `Gdid` field, through the driver (`insert_one`: bson's raw serializer) | `Binary` `0x80` |
//! | a plain `Gdid` field, through [`bson::serialize_to_document`](::bson::serialize_to_document) | `Binary` `0x80` |
//! | `doc! { "_id": id }`, `Bson::from(id)`, `Binary::from(id)` | `Binary` `0x80` |
//! | `#[serde(with = "gdid_core::bson::binary")]` | `Binary` `0x80` |
//! | `Option<Gdid>`: `None` | `Null` |
//!
//! ```
//! use bson::{doc, spec::BinarySubtype, Binary};
//! use gdid_core::Gdid;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, Debug, PartialEq)]
//! struct Order {
//!     #[serde(rename = "_id")]
//!     id: Gdid,
//!     parent: Option<Gdid>,
//!     total_cents: i64,
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let order = Order { id: "1293:3:57".parse()?, parent: None, total_cents: 1999 };
//! let document = bson::serialize_to_document(&order)?;
//! let binary = Binary { subtype: BinarySubtype::UserDefined(0x80), bytes: order.id.to_bytes().to_vec() };
//! assert_eq!(document, doc! { "_id": binary, "parent": null, "total_cents": 1999_i64 });
//! assert_eq!(document, doc! { "_id": order.id, "parent": order.parent, "total_cents": 1999_i64 });
//! assert_eq!(bson::deserialize_from_document::<Order>(document)?, order);
//! # Ok(())
//! # }
//! ```
//!
//! # How a plain field gets there
//!
//! bson's two serializers disagree about the plain serde form: the document serializer
//! (`serialize_to_document`) says it is human-readable (colon text would follow) and the raw one
//! (`serialize_to_vec`, the driver's) says it is not (a generic, subtype 0, binary would follow).
//! bson offers no hook to tell its serializers from JSON or bincode: it recognises its own types
//! by struct names (`$binary`, `$oid`) that any other format would write as maps. So `Gdid`'s
//! `Serialize` asks for the serializer's type name and, for bson's (`bson::ser::…`), writes a
//! `RawBinaryRef` of subtype `0x80`: bson's own `$binary` form. JSON keeps the colon text and
//! bincode-like formats the 12 bytes. The tests of this crate pin that recognition, for both
//! serializers, to the bson version in use.
//!
//! BSON keys are strings, so a map keyed by `Gdid` is an error ("invalid document key type")
//! from both serializers: key such maps by `id.to_string()`.
//!
//! # Reading
//!
//! Reading is lenient where it cannot yield a wrong id: a `Binary` of subtype `0x80` or generic
//! (`0x00`) with 12 bytes, an `ObjectId` (its 12 bytes read as a GDID), or a string in either text
//! form: all that earlier versions of this crate (and NFX/Azos) wrote. That holds for a plain
//! `Gdid` field, the [`binary`] helper and the conversions. `Null` is `None` for `Option<Gdid>`
//! ([`binary::option`], [`option_from_bson`]). Anything else is a [`BsonError`].

use ::bson::oid::ObjectId;
use ::bson::spec::{BinarySubtype, ElementType};
use ::bson::{Binary, Bson, RawBinaryRef, RawBsonRef};
use ::serde::Deserialize;
use ::serde::de::{self, MapAccess, value::MapAccessDeserializer};

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

/// `Option<Gdid>` from a BSON value: `Null` is `None`, anything else reads as a [`Gdid`] does.
///
/// (`Bson::from(option)` goes the other way: `None` is `Null`.)
///
/// ```
/// use bson::{doc, Bson};
/// use gdid_core::Gdid;
/// use gdid_core::bson::option_from_bson;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let parent: Option<Gdid> = Some("1:2:3".parse()?);
/// let document = doc! { "parent": parent, "none": Option::<Gdid>::None };
/// assert_eq!(document.get("none"), Some(&Bson::Null));
/// assert_eq!(option_from_bson(&document["parent"])?, parent);
/// assert_eq!(option_from_bson(&document["none"])?, None);
/// # Ok(())
/// # }
/// ```
///
/// # Errors
///
/// A [`BsonError`] when the value is neither `Null` nor a GDID.
pub fn option_from_bson(value: &Bson) -> Result<Option<Gdid>, BsonError> {
    match value {
        Bson::Null => Ok(None),
        value => Gdid::try_from(value).map(Some),
    }
}

/// [`option_from_bson`] for a raw value.
///
/// # Errors
///
/// A [`BsonError`] when the value is neither `Null` nor a GDID.
pub fn option_from_raw(value: RawBsonRef<'_>) -> Result<Option<Gdid>, BsonError> {
    match value {
        RawBsonRef::Null => Ok(None),
        value => Gdid::try_from(value).map(Some),
    }
}

/// Whether `S` is one of bson's serializers: its type name names a `bson::ser` module (wrapped in
/// another serializer's type or not). See the module documentation for why.
pub(crate) fn is_bson_serializer<S>() -> bool {
    const BSON_SERIALIZERS: &[u8] = b"bson::ser::";
    let name = core::any::type_name::<S>().as_bytes();
    // A byte loop: with `str::match_indices` a JSON id took 180 ns instead of 45; this is ~free.
    (0..name.len()).any(|at| {
        name[at] == b'b'
            && name[at..].starts_with(BSON_SERIALIZERS)
            // `bson` itself, not a crate whose name ends with it.
            && (at == 0 || !(name[at - 1].is_ascii_alphanumeric() || name[at - 1] == b'_'))
    })
}

/// A GDID from the map a bson deserializer shows a non-generic `Binary` (`$binary`) or an
/// `ObjectId` (`$oid`) as.
pub(crate) fn gdid_from_extended_map<'de, A: MapAccess<'de>>(map: A) -> Result<Gdid, A::Error> {
    let value = Bson::deserialize(MapAccessDeserializer::new(map))?;
    Gdid::try_from(&value).map_err(de::Error::custom)
}

/// `#[serde(with = "gdid_core::bson::binary")]`: the field is a `Binary` of subtype `0x80` in both
/// of bson's serializers, and reads back from a binary, an `ObjectId` or a string.
///
/// A plain `Gdid` field is written the same way in bson; this helper also makes the form explicit,
/// and it writes the `$binary` form (extended JSON's) in other formats too.
pub mod binary {
    use ::bson::{Bson, RawBinaryRef};
    use ::serde::{Deserialize, Deserializer, Serialize, Serializer, de};

    use crate::Gdid;

    /// Serializes the id as a BSON `Binary` of subtype `0x80`.
    pub fn serialize<S: Serializer>(id: &Gdid, serializer: S) -> Result<S::Ok, S::Error> {
        RawBinaryRef {
            subtype: super::BINARY_SUBTYPE,
            bytes: id.as_bytes(),
        }
        .serialize(serializer)
    }

    /// Deserializes an id from a `Binary`, an `ObjectId` or a string.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Gdid, D::Error> {
        let value = Bson::deserialize(deserializer)?;
        Gdid::try_from(&value).map_err(de::Error::custom)
    }

    crate::external::serde_support::option_submodule!();
}
