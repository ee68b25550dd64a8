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
//! | ELink (NFX/Azos) | [`Gdid::to_elink`], [`Gdid::from_elink`], [`ELink`] (with metadata), [`GdidSymbol::parse_any`] | 9-32 chars |
//! | any text form by name (`text`, `hex`, `leb`, `compact`, `elink`) | [`Form::write`], [`Form::read`], `Form: FromStr` (the `gdid` command, `gdid serve` and the PostgreSQL extension name forms by it) | |
//! | serde (feature `serde`) | readable: colon text; binary: 12 bytes; `serde` module helpers (`Option<Gdid>`: `::option`) | |
//! | BSON (feature `bson`) | `Binary` subtype `0x80` by every path, plain fields included; `bson::binary` | 12 bytes |
//! | SQL (features `sqlx-mysql`, `sqlx-postgres`, `sqlx-sqlite`) | sqlx `Type`/`Encode`/`Decode` | `BINARY(12)`/`BYTEA`/`BLOB` |
//! | JSON Schema, OpenAPI, GraphQL (features `schemars`, `utoipa`, `async-graphql`) | `JsonSchema`, `ToSchema`/`PartialSchema`: a string with the colon text's pattern; a GraphQL scalar `Gdid` | colon text |
//! | rusqlite (feature `rusqlite`) | `ToSql`/`FromSql` | `BLOB` (12 bytes) |
//! | zero-copy (feature `zerocopy`) | `zerocopy::view` of bytes as `&[Gdid]`, `view_or_copy`, `bytes_of`; zerocopy's traits | 12 bytes each |
//! | property tests and fuzzing (features `proptest`, `arbitrary`) | `proptest` module strategies (`any_gdid`, `gdid_of_era`, `gdid_of_authority`, `increasing`); `arbitrary::Arbitrary` from 12 bytes | |
//! | ORMs and drivers (features `diesel`, `sea-orm`, `postgres-types`) | diesel `ToSql`/`FromSql`/`AsExpression`, sea-orm column type (primary keys too), postgres-types `ToSql`/`FromSql` | `BINARY(12)`/`BYTEA`/`BLOB` |
//!
//! Every decoder returns a typed error that says what was wrong and where, and never panics.
//!
//! ## Features
//!
//! With default features off the crate pulls no async runtime and no database driver, and needs
//! no standard library: it is `no_std` (with `alloc`) unless the default feature `std` is on, and
//! the value type with every codec (text, hex, bytes, LEB128, compact, ELink, and serde with
//! `--features serde`), and the `schemars` and `zerocopy` features, work without it. Every other
//! feature (`bson`, the SQL and ORM ones, `rusqlite`, `utoipa`, `async-graphql`, `proptest`,
//! `arbitrary`) turns `std` on. The engine that issues ids is the `gdid-engine` crate.
#![deny(missing_docs, missing_debug_implementations)]
#![doc(test(attr(deny(warnings))))]
#![cfg_attr(docsrs, feature(doc_cfg))]
// The value type and its codecs use `core` and `alloc` only: without the `std` feature the crate
// is `no_std` (its unit tests use std).
#![cfg_attr(not(any(feature = "std", test)), no_std)]

extern crate alloc;

mod elink;
mod error;
mod form;
mod gdid;
mod symbol;
mod text;
mod varint;

mod external;

pub use elink::{ELink, ELinkError};
pub use error::{BufferTooSmall, DecodeError, Field, InvalidLength, InvalidParts, ParseError};
#[cfg(any(feature = "sqlx-postgres", feature = "postgres-types"))]
pub use external::native_postgres::PgGdid;
pub use form::{Form, ReadError, UnknownForm};
pub use gdid::{AUTHORITY_MAX, COUNTER_MAX, Gdid};
pub use symbol::{GdidSymbol, ParseAnyError};

#[cfg(feature = "serde")]
pub use external::serde_support as serde;

#[cfg(feature = "bson")]
pub use external::bson_support as bson;

#[cfg(feature = "proptest")]
pub use external::proptest_support as proptest;

#[cfg(feature = "zerocopy")]
pub use external::zerocopy_support as zerocopy;

/// The examples of docs/interoperability.md, run as doc tests (with `--all-features`, as
/// `scripts/test` runs them: the ORM sections need theirs). The README's example uses the `gdid`
/// crate: its doc tests and `scripts/newcomer` run it.
#[cfg(all(
    doctest,
    feature = "bson",
    feature = "sqlx-mysql",
    feature = "diesel",
    feature = "sea-orm",
    feature = "postgres-types",
    feature = "proptest",
    feature = "arbitrary",
    feature = "rusqlite",
    feature = "schemars",
    feature = "utoipa",
    feature = "async-graphql",
    feature = "zerocopy"
))]
#[doc = include_str!("../../docs/interoperability.md")]
pub struct DocumentationDoctests;
