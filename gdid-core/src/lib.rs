//! # gdid-core
//!
//! The GDID (global distributed id): a 96-bit identifier made of a 32-bit **era**, a 4-bit
//! **authority** and a 60-bit **counter**, stored as 12 big-endian bytes so that byte order, id
//! order and B-tree order are one and the same. It is compatible with the NFX/Azos GDID.
//!
//! ```
//! use gdid_core::Gdid;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let id: Gdid = "1293:3:57".parse()?;
//! assert_eq!(id.to_bytes(), [0, 0, 5, 13, 0x30, 0, 0, 0, 0, 0, 0, 57]);
//! assert_eq!(format!("{id:x}"), "0000050d3000000000000039");
//!
//! let mut compact = Vec::new();
//! id.encode_compact(&mut compact);
//! assert_eq!(compact, [0x8d, 0x0a, 0x93, 0x07]); // 4 bytes instead of 12
//! assert_eq!(Gdid::decode_compact(&compact)?, (id, 4));
//! # Ok(())
//! # }
//! ```
//!
//! ## Forms
//!
//! | form | API | size |
//! |---|---|---|
//! | colon text `era:authority:counter` | `Display`, `FromStr`, [`Gdid::try_parse`], [`gdid!`] | 5-33 chars |
//! | hex | `{:x}`, `{:X}`, `{:#x}`, `FromStr` | 24 chars |
//! | bytes | [`Gdid::to_bytes`], [`Gdid::from_bytes`], `TryFrom<&[u8]>` | 12 bytes |
//! | `leb` (NFX "Slim") | [`Gdid::encode_leb`], [`Gdid::decode_leb`] | 2-15 bytes |
//! | `compact` | [`Gdid::encode_compact`], [`Gdid::decode_compact`] | 2-15 bytes |
//! | serde (feature `serde`) | readable: colon text; binary: 12 bytes; [`serde`](crate::serde) helpers | |
//! | BSON (feature `bson`) | `Binary` subtype `0x80`; [`bson::binary`](crate::bson::binary) | 12 bytes |
//! | SQL (features `sqlx-mysql`, `sqlx-postgres`, `sqlx-sqlite`) | sqlx `Type`/`Encode`/`Decode` | `BINARY(12)`/`BYTEA`/`BLOB` |
//!
//! Every decoder returns a typed error that says what was wrong and where, and never panics.
//!
//! ## Features
//!
//! With default features off the crate pulls no async runtime and no database driver.
#![deny(missing_docs, missing_debug_implementations)]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod error;
mod gdid;
mod text;
mod varint;

mod external;

#[cfg(feature = "generator")]
pub mod generator;

pub use error::{BufferTooSmall, DecodeError, Field, InvalidLength, InvalidParts, ParseError};
pub use gdid::{AUTHORITY_MAX, COUNTER_MAX, Gdid};

#[cfg(feature = "serde")]
pub use external::serde_support as serde;

#[cfg(feature = "bson")]
pub use external::bson_support as bson;

/// The README's examples, run as doc tests.
#[cfg(all(
    doctest,
    feature = "bson",
    feature = "sqlx-mysql",
    feature = "generator"
))]
#[doc = include_str!("../../README.md")]
pub struct ReadmeDoctests;

/// The examples of docs/interoperability.md, run as doc tests.
#[cfg(all(
    doctest,
    feature = "bson",
    feature = "sqlx-mysql",
    feature = "generator"
))]
#[doc = include_str!("../../docs/interoperability.md")]
pub struct InteroperabilityDoctests;

/// The examples of docs/strategies.md, run as doc tests.
#[cfg(all(
    doctest,
    feature = "bson",
    feature = "sqlx-mysql",
    feature = "generator"
))]
#[doc = include_str!("../../docs/strategies.md")]
pub struct StrategiesDoctests;
