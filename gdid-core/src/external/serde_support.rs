//! serde support (feature `serde`).
//!
//! `Gdid` serializes as its colon text (`"1293:3:57"`) in human-readable formats (JSON, TOML,
//! YAML) and as its 12 bytes in binary formats (bincode, postcard, MessagePack). Deserialization
//! accepts a string (colon or hex form), 12 bytes, or a sequence of 12 byte values.
//!
//! The submodules pick one form whatever the format, for `#[serde(with = "...")]`:
//!
//! ```
//! use gdid_core::Gdid;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, PartialEq, Debug)]
//! struct Row {
//!     id: Gdid,
//!     #[serde(with = "gdid_core::serde::hex")]
//!     parent: Gdid,
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let row = Row { id: "1:2:3".parse()?, parent: "1:2:1".parse()? };
//! let json = serde_json::to_string(&row)?;
//! assert_eq!(json, r#"{"id":"1:2:3","parent":"000000012000000000000001"}"#);
//! assert_eq!(serde_json::from_str::<Row>(&json)?, row);
//! # Ok(())
//! # }
//! ```
//!
//! BSON needs more than `is_human_readable()`: see [`crate::bson`].

use core::fmt;

use ::serde::de::{self, Deserialize, Deserializer, SeqAccess, Visitor};
use ::serde::ser::{Serialize, Serializer};

use crate::Gdid;

impl Serialize for Gdid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if serializer.is_human_readable() {
            text::serialize(self, serializer)
        } else {
            bytes::serialize(self, serializer)
        }
    }
}

impl<'de> Deserialize<'de> for Gdid {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_str(GdidVisitor)
        } else {
            deserializer.deserialize_bytes(GdidVisitor)
        }
    }
}

/// Accepts the text forms, the 12-byte form and a sequence of 12 byte values.
struct GdidVisitor;

impl<'de> Visitor<'de> for GdidVisitor {
    type Value = Gdid;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a GDID as era:authority:counter text, 24 hex digits or 12 bytes")
    }

    fn visit_str<E: de::Error>(self, value: &str) -> Result<Gdid, E> {
        value
            .parse()
            .map_err(|e| E::custom(format_args!("GDID parsing failed: {e}")))
    }

    fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<Gdid, E> {
        Gdid::from_slice(value).map_err(|e| E::custom(format_args!("GDID parsing failed: {e}")))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Gdid, A::Error> {
        let mut bytes = [0u8; Gdid::SIZE];
        for (index, byte) in bytes.iter_mut().enumerate() {
            *byte = seq
                .next_element()?
                .ok_or_else(|| de::Error::invalid_length(index, &self))?;
        }
        if seq.next_element::<de::IgnoredAny>()?.is_some() {
            return Err(de::Error::invalid_length(Gdid::SIZE + 1, &self));
        }
        Ok(Gdid::from_bytes(bytes))
    }
}

/// Always the colon text `era:authority:counter`, whatever the format.
pub mod text {
    use super::*;

    /// Serializes the colon text.
    pub fn serialize<S: Serializer>(id: &Gdid, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(id.encode_text(&mut [0; Gdid::TEXT_MAX_LEN]))
    }

    /// Deserializes a string in either text form.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Gdid, D::Error> {
        deserializer.deserialize_str(GdidVisitor)
    }
}

/// Always the 24 lowercase hex digits of the 12-byte form, whatever the format.
pub mod hex {
    use super::*;

    /// Serializes the 24 hex digits.
    pub fn serialize<S: Serializer>(id: &Gdid, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(id.encode_hex_lower(&mut [0; Gdid::HEX_LEN]))
    }

    /// Deserializes a string in either text form.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Gdid, D::Error> {
        deserializer.deserialize_str(GdidVisitor)
    }
}

/// Always the 12-byte form, whatever the format.
pub mod bytes {
    use super::*;

    /// Serializes the 12 bytes.
    pub fn serialize<S: Serializer>(id: &Gdid, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_bytes(id.as_bytes())
    }

    /// Deserializes 12 bytes (or a sequence of 12 byte values).
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Gdid, D::Error> {
        deserializer.deserialize_bytes(GdidVisitor)
    }
}

/// Always the variable-length `compact` form (2-15 bytes), whatever the format.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// #[derive(serde::Serialize, serde::Deserialize)]
/// struct Event {
///     #[serde(with = "gdid_core::serde::compact")]
///     id: gdid_core::Gdid,
/// }
///
/// let json = serde_json::to_string(&Event { id: "5:3:123".parse()? })?;
/// assert_eq!(json, r#"{"id":[5,179,15]}"#);
/// # Ok(())
/// # }
/// ```
pub mod compact {
    use super::*;

    /// Serializes the `compact` bytes.
    pub fn serialize<S: Serializer>(id: &Gdid, serializer: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; Gdid::VARINT_MAX_LEN];
        let len = id
            .write_compact(&mut buf)
            .map_err(::serde::ser::Error::custom)?;
        serializer.serialize_bytes(&buf[..len])
    }

    /// Deserializes `compact` bytes (or a sequence of byte values); trailing bytes are an error.
    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Gdid, D::Error> {
        deserializer.deserialize_bytes(CompactVisitor)
    }

    struct CompactVisitor;

    impl<'de> Visitor<'de> for CompactVisitor {
        type Value = Gdid;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a GDID in compact form: 2 to 15 bytes")
        }

        fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<Gdid, E> {
            let (id, used) = Gdid::decode_compact(value)
                .map_err(|e| E::custom(format_args!("GDID parsing failed: {e}")))?;
            if used != value.len() {
                return Err(E::custom(format_args!(
                    "GDID parsing failed: {} bytes after the compact form",
                    value.len() - used
                )));
            }
            Ok(id)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Gdid, A::Error> {
            let mut buf = [0u8; Gdid::VARINT_MAX_LEN];
            let mut len = 0;
            while let Some(byte) = seq.next_element()? {
                if len == buf.len() {
                    return Err(de::Error::invalid_length(len + 1, &self));
                }
                buf[len] = byte;
                len += 1;
            }
            self.visit_bytes(&buf[..len])
        }
    }
}
