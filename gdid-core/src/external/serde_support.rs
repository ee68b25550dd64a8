//! serde support (feature `serde`).
//!
//! `Gdid` serializes as its colon text (`"1293:3:57"`) in human-readable formats (JSON, TOML,
//! YAML) and as its 12 bytes in binary formats (bincode, postcard, MessagePack). With the `bson`
//! feature on, bson's serializers get a `Binary` of subtype `0x80` instead, whichever of them
//! runs: see [`crate::bson`]. Deserialization accepts a string (colon or hex form), 12 bytes, a
//! sequence of 12 byte values and, with the `bson` feature, BSON's `Binary` and `ObjectId`.
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
//! # Nullable ids
//!
//! `Option<Gdid>` is the one way to say "no id": a plain `Option<Gdid>` field works as any
//! `Option` does, and every helper has an `option` submodule for `Option<Gdid>` fields (as
//! `time::serde::rfc3339::option` does), where `None` is the format's null. Add
//! `#[serde(default)]` so that a missing field reads as `None` too.
//!
//! ```
//! use gdid_core::Gdid;
//! use serde::{Deserialize, Serialize};
//!
//! #[derive(Serialize, Deserialize, PartialEq, Debug)]
//! struct Node {
//!     id: Gdid,
//!     #[serde(default, with = "gdid_core::serde::hex::option")]
//!     parent: Option<Gdid>,
//! }
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let root = Node { id: "1:2:1".parse()?, parent: None };
//! assert_eq!(serde_json::to_string(&root)?, r#"{"id":"1:2:1","parent":null}"#);
//! assert_eq!(serde_json::from_str::<Node>(r#"{"id":"1:2:1"}"#)?, root);
//! # Ok(())
//! # }
//! ```
//!
//! NFX/Azos say "no id" with [`Gdid::ZERO`] instead. That reading is never implied: ask for it
//! with [`zero_as_none`] on the field, or [`Gdid::non_zero`] on a value.

use core::fmt;
use core::marker::PhantomData;

use ::serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use ::serde::ser::{Serialize, Serializer};

use crate::Gdid;

impl Serialize for Gdid {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        #[cfg(feature = "bson")]
        if crate::bson::is_bson_serializer::<S>() {
            return crate::bson::binary::serialize(self, serializer);
        }
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

/// Accepts the text forms, the 12-byte form, a sequence of 12 byte values and (feature `bson`)
/// the maps bson's deserializers show a `Binary` or an `ObjectId` as.
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

    #[cfg(feature = "bson")]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Gdid, A::Error> {
        crate::bson::gdid_from_extended_map(map)
    }

    #[cfg(not(feature = "bson"))]
    fn visit_map<A: MapAccess<'de>>(self, _map: A) -> Result<Gdid, A::Error> {
        Err(de::Error::invalid_type(de::Unexpected::Map, &self))
    }
}

/// One way of writing a GDID, as a type: what the `option` submodules and [`zero_as_none`]
/// build on.
pub(crate) trait Form {
    /// Serializes `id` in this form.
    fn serialize<S: Serializer>(id: &Gdid, serializer: S) -> Result<S::Ok, S::Error>;
    /// Deserializes an id written in this form.
    fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Gdid, D::Error>;
}

/// `Option<Gdid>` in a [`Form`]: `None` is the format's null.
pub(crate) mod nullable {
    use super::*;

    /// An id to be written in the form `F`.
    struct InForm<F>(Gdid, PhantomData<F>);

    impl<F: Form> Serialize for InForm<F> {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            F::serialize(&self.0, serializer)
        }
    }

    /// Serializes `None` as the format's null and `Some(id)` in the form `F`.
    pub(crate) fn serialize<F: Form, S: Serializer>(
        id: &Option<Gdid>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match id {
            None => serializer.serialize_none(),
            Some(id) => serializer.serialize_some(&InForm::<F>(*id, PhantomData)),
        }
    }

    /// Deserializes null as `None` and anything else as an id in the form `F`.
    pub(crate) fn deserialize<'de, F: Form, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Gdid>, D::Error> {
        deserializer.deserialize_option(OptionVisitor::<F>(PhantomData))
    }

    struct OptionVisitor<F>(PhantomData<F>);

    impl<'de, F: Form> Visitor<'de> for OptionVisitor<F> {
        type Value = Option<Gdid>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a GDID or null")
        }

        fn visit_none<E: de::Error>(self) -> Result<Option<Gdid>, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Option<Gdid>, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(
            self,
            deserializer: D,
        ) -> Result<Option<Gdid>, D::Error> {
            F::deserialize(deserializer).map(Some)
        }
    }
}

/// Writes the `option` submodule of a `with` module whose `serialize` and `deserialize` take a
/// `Gdid`: the same form for `Option<Gdid>` fields.
macro_rules! option_submodule {
    () => {
        /// The same form for `Option<Gdid>` fields: `None` is the format's null (`null` in JSON,
        /// `Null` in BSON), and null reads back as `None`. Pair it with `#[serde(default)]` to read
        /// a missing field as `None` too.
        pub mod option {
            use ::serde::{Deserializer, Serializer};

            use crate::Gdid;

            /// This module's parent form, as a type.
            struct ParentForm;

            impl $crate::external::serde_support::Form for ParentForm {
                fn serialize<S: Serializer>(id: &Gdid, serializer: S) -> Result<S::Ok, S::Error> {
                    super::serialize(id, serializer)
                }

                fn deserialize<'de, D: Deserializer<'de>>(
                    deserializer: D,
                ) -> Result<Gdid, D::Error> {
                    super::deserialize(deserializer)
                }
            }

            /// Serializes `None` as null and `Some(id)` as the parent module does.
            pub fn serialize<S: Serializer>(
                id: &Option<Gdid>,
                serializer: S,
            ) -> Result<S::Ok, S::Error> {
                $crate::external::serde_support::nullable::serialize::<ParentForm, S>(
                    id, serializer,
                )
            }

            /// Deserializes null as `None` and anything else as the parent module does.
            pub fn deserialize<'de, D: Deserializer<'de>>(
                deserializer: D,
            ) -> Result<Option<Gdid>, D::Error> {
                $crate::external::serde_support::nullable::deserialize::<ParentForm, D>(
                    deserializer,
                )
            }
        }
    };
}
#[cfg(feature = "bson")]
pub(crate) use option_submodule;

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

    option_submodule!();
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

    option_submodule!();
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

    option_submodule!();
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

    option_submodule!();

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

/// NFX/Azos's convention for `Option<Gdid>` fields: [`Gdid::ZERO`] means "no id".
///
/// `None` (and `Some(Gdid::ZERO)`) is written as `Gdid::ZERO` in the plain form, and
/// `Gdid::ZERO` (or the format's null) reads back as `None`. Only where this helper is named:
/// a plain `Option<Gdid>` keeps `Some(Gdid::ZERO)` apart from `None`.
///
/// ```
/// use gdid_core::Gdid;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(Serialize, Deserialize, PartialEq, Debug)]
/// struct AzosRow {
///     #[serde(with = "gdid_core::serde::zero_as_none")]
///     parent: Option<Gdid>,
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// assert_eq!(serde_json::to_string(&AzosRow { parent: None })?, r#"{"parent":"0:0:0"}"#);
/// assert_eq!(serde_json::from_str::<AzosRow>(r#"{"parent":"0:0:0"}"#)?, AzosRow { parent: None });
/// assert_eq!(serde_json::from_str::<AzosRow>(r#"{"parent":null}"#)?, AzosRow { parent: None });
/// let child = AzosRow { parent: Some("1:2:3".parse()?) };
/// assert_eq!(serde_json::from_str::<AzosRow>(&serde_json::to_string(&child)?)?, child);
/// # Ok(())
/// # }
/// ```
pub mod zero_as_none {
    use super::*;

    /// Serializes `None` as `Gdid::ZERO`, `Some(id)` as `id`, both in the plain form.
    pub fn serialize<S: Serializer>(id: &Option<Gdid>, serializer: S) -> Result<S::Ok, S::Error> {
        id.unwrap_or(Gdid::ZERO).serialize(serializer)
    }

    /// Deserializes an id as [`Gdid::non_zero`] does, and the format's null as `None`.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Gdid>, D::Error> {
        if deserializer.is_human_readable() {
            deserializer.deserialize_option(ZeroAsNoneVisitor)
        } else {
            deserializer.deserialize_bytes(ZeroAsNoneVisitor)
        }
    }

    /// [`GdidVisitor`] with null and `Gdid::ZERO` as `None`.
    struct ZeroAsNoneVisitor;

    impl<'de> Visitor<'de> for ZeroAsNoneVisitor {
        type Value = Option<Gdid>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            GdidVisitor.expecting(f)?;
            f.write_str(", or null")
        }

        fn visit_none<E: de::Error>(self) -> Result<Option<Gdid>, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Option<Gdid>, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(
            self,
            deserializer: D,
        ) -> Result<Option<Gdid>, D::Error> {
            Gdid::deserialize(deserializer).map(Gdid::non_zero)
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<Option<Gdid>, E> {
            GdidVisitor.visit_str(value).map(Gdid::non_zero)
        }

        fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<Option<Gdid>, E> {
            GdidVisitor.visit_bytes(value).map(Gdid::non_zero)
        }

        fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Option<Gdid>, A::Error> {
            GdidVisitor.visit_seq(seq).map(Gdid::non_zero)
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Option<Gdid>, A::Error> {
            GdidVisitor.visit_map(map).map(Gdid::non_zero)
        }
    }
}
