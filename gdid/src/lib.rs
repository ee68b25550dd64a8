//! # gdid
//!
//! 96-bit, ordered, compact global distributed ids (era, authority, counter), issued from blocks
//! of a store's durable counter; and the other id strategies (one-at-a-time counters, sharded
//! ranges, hi-lo windows, random, UUID) behind the same [`IdGenerator`] trait. This is the crate
//! to add: it opens any store from its URL ([`Store`]) and re-exports the rest.
//!
//! The README's first example: an id from a SQLite store, printed and inserted into a table of
//! yours with sqlx (with the `sqlite` feature a [`Gdid`] binds as a `BLOB`).
//!
//! ```rust,standalone_crate
//! use gdid::Gdid;
//! use sqlx::SqlitePool;
//!
//! # #[cfg(feature = "sqlite")] // the example is SQLite's: a build without it runs none of it
//! #[tokio::main]
//! async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let folder = std::env::temp_dir().join(format!("gdid-doc-{}", std::process::id()));
//! # std::fs::create_dir_all(&folder)?;
//! # std::env::set_current_dir(&folder)?;
//!     // gdid's counters, in ./gdid.sqlite (created on first use; the `gdid` command's default).
//!     let store = gdid::Store::open("sqlite:gdid.sqlite").await?;
//!     let orders = store.block_generator("shop", "orders").build()?;
//!     let id: Gdid = orders.next_id().await?;
//!     println!("new id: {id}");
//! # assert_eq!(id.to_string(), "0:1:1"); // what the README shows
//!
//!     // Your own table, here in the same file: the id is a 12-byte BLOB.
//!     let db = SqlitePool::connect("sqlite:gdid.sqlite").await?;
//!     sqlx::query("CREATE TABLE IF NOT EXISTS orders (id BLOB PRIMARY KEY, item TEXT NOT NULL)")
//!         .execute(&db)
//!         .await?;
//!     sqlx::query("INSERT INTO orders (id, item) VALUES (?, ?)")
//!         .bind(id)
//!         .bind("book")
//!         .execute(&db)
//!         .await?;
//!     let rows: Vec<(Gdid, String)> = sqlx::query_as("SELECT id, item FROM orders ORDER BY id")
//!         .fetch_all(&db)
//!         .await?;
//!     for (id, item) in rows {
//!         println!("row: {id} {item}");
//!     }
//!
//!     // Gives the ids reserved and not used back to the store: the next run goes on from here.
//!     orders.close().await?;
//! # std::fs::remove_dir_all(&folder)?;
//!     Ok(())
//! }
//! # #[cfg(not(feature = "sqlite"))]
//! # fn main() {}
//! ```
//!
//! ## Features
//!
//! | feature    | what it adds                                                       |
//! |------------|--------------------------------------------------------------------|
//! | `sqlite`   | (default) `sqlite:PATH` stores; `gdid::sql` (gdid-sql)             |
//! | `mysql`    | `mysql://…`, `mariadb://…` stores; `gdid::sql`                     |
//! | `postgres` | `postgres://…`, `postgresql://…` stores; `gdid::sql`               |
//! | `mongodb`  | `mongodb://…`, `mongodb+srv://…` stores; `gdid::mongo` (gdid-mongo)|
//! | `http`     | `http://…`, `https://…` stores: authorities served by `gdid serve`; `gdid::http` (gdid-http) |
//! | `uuid`     | `gdid::uuid` (gdid-uuid): UUID generators                          |
//! | `random`   | `gdid::random` (gdid-random): random ids inserted with retry       |
//! | `serde`    | serde for [`Gdid`] (`gdid::serde`)                                 |
//! | `bson`     | BSON for [`Gdid`] (`gdid::bson`)                                   |
//! | `blocking` | `gdid::blocking`: stores and generators without async              |
//! | `metrics`  | generators report through the `metrics` facade (any exporter)       |
//! | `diesel`   | diesel 2.3 columns for [`Gdid`] (MySQL, PostgreSQL, SQLite)        |
//! | `sea-orm`  | sea-orm 2.0 column and primary-key type for [`Gdid`]                |
//! | `postgres-types` | `ToSql`/`FromSql` for [`Gdid`] (tokio-postgres, postgres)    |
//! | `rusqlite` | rusqlite `ToSql`/`FromSql` for [`Gdid`]: a 12-byte `BLOB`, as sqlx writes it |
//! | `schemars` | schemars 1 `JsonSchema` for [`Gdid`]: a string with the colon text's pattern |
//! | `utoipa`   | utoipa 5 `ToSchema`/`PartialSchema`: the same schema in an OpenAPI document |
//! | `async-graphql` | async-graphql 7 scalar `Gdid` (colon text; Rust 1.89)          |
//! | `proptest` | strategies of ids for property tests (`gdid::proptest`)            |
//! | `arbitrary`| `arbitrary::Arbitrary` for [`Gdid`] (fuzzers)                      |
//! | `zerocopy` | zerocopy 0.8 traits; `gdid::zerocopy`: bytes of ids viewed as `&[Gdid]` |
//! | `engine`   | generators and stores (gdid-engine); every store feature turns it on |
//!
//! With `default-features = false` and none of the store features, the crate is the value type
//! and its codecs alone (add `serde`, `bson` or a column feature as needed): no async runtime,
//! no driver.
//!
//! A URL whose store's feature is off is refused with [`StoreError::FeatureDisabled`], naming
//! the feature. `memory:` stores (in this process only: not durable, for tests and examples)
//! need no feature.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs, missing_debug_implementations)]

// Everything that issues ids needs the engine (feature `engine`, which every store feature
// turns on); without it this crate is the value type and its codecs alone. Each of these
// modules says so once, at its top: `#![cfg(feature = "engine")]`.
mod backend;
mod durability;
mod error;
mod memory;
mod options;
mod scheme;
mod sequences;
mod shard;
mod store;
mod stores;
mod url;

#[cfg(feature = "engine")]
pub use crate::{
    error::StoreError,
    options::OpenOptions,
    scheme::StoreKind,
    sequences::{FenceScope, Fenced},
    shard::{ShardError, StoreShard},
    store::Store,
    stores::Stores,
    url::store_kind,
};
#[cfg(feature = "engine")]
pub use gdid_engine::durability::{Durability, Setting, Verdict};
// What a user of generators names most (the rest is in `engine`).
/// A store URL fit to print: its password and secrets replaced (`gdid_engine::plumbing::redact`).
#[cfg(feature = "engine")]
pub use gdid_engine::plumbing::redact;
#[cfg(feature = "engine")]
pub use gdid_engine::{
    Authority, AuthorityError, BlockGenerator, BlockGeneratorBuilder, DynIdGenerator, Error,
    ErrorDetail, GeneratorConfig, IdBatch, IdGenerator, IdOrder, MemoryAuthority, Pick, Preference,
    RangeLayout, SharedIdGenerator,
};

#[cfg(feature = "blocking")]
pub mod blocking;
#[cfg(any(
    feature = "sqlite",
    feature = "mysql",
    feature = "postgres",
    feature = "mongodb"
))]
mod database;
#[cfg(feature = "http")]
mod open_http;
#[cfg(feature = "mongodb")]
mod open_mongo;
#[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
mod open_sql;
pub mod verify;

// The value type and its errors.
/// A `Gdid` in a column of the native PostgreSQL type `gdid` (the `gdid` extension), for sqlx
/// (feature `postgres`) and tokio-postgres (feature `postgres-types`); a plain `Gdid` is `BYTEA`.
#[cfg(any(feature = "postgres", feature = "postgres-types"))]
pub use gdid_core::PgGdid;
pub use gdid_core::{
    AUTHORITY_MAX, BufferTooSmall, COUNTER_MAX, DecodeError, ELink, ELinkError, Field, Form, Gdid,
    GdidSymbol, InvalidLength, InvalidParts, ParseAnyError, ParseError, ReadError, UnknownForm,
};

/// A `Gdid` literal, parsed at compile time (gdid-core's `gdid!`).
///
/// ```
/// use gdid::{Gdid, gdid};
///
/// const ROOT: Gdid = gdid!("0:1:7");
/// assert_eq!(ROOT.counter(), 7);
/// assert_eq!(gdid!("00000000100000000000002a"), Gdid::from_parts(0, 1, 42).unwrap());
/// ```
///
/// An invalid literal does not compile (authority 16 is past 15):
///
/// ```compile_fail
/// const BAD: gdid::Gdid = gdid::gdid!("1:16:1");
/// ```
pub use gdid_core::gdid;

/// proptest strategies of ids (feature `proptest`; gdid-core's `proptest`).
#[cfg(feature = "proptest")]
pub use gdid_core::proptest;

/// Bytes of ids viewed as `&[Gdid]` in place (feature `zerocopy`; gdid-core's `zerocopy`).
#[cfg(feature = "zerocopy")]
pub use gdid_core::zerocopy;

/// The engine (gdid-engine) as an application uses it: generators, their configuration and
/// errors, and the modules `durability`, `sizing`, `windows`, `sequences` and `plumbing`. A
/// backend author's API (`gdid_engine::backend`: the store operations a dialect implements and
/// the rules they get) is not here: a backend depends on gdid-engine itself.
#[cfg(feature = "engine")]
pub mod engine {
    pub use gdid_engine::{
        Authority, AuthorityError, AuthorityFailure, AuthorityStats, Block, BlockGenerator,
        BlockGeneratorBuilder, Coalescing, CounterState, DynAuthority, DynIdGenerator, Error,
        ErrorDetail, ErrorKind, FailureCause, GdidProvider, GdidProviderBuilder, GeneratorConfig,
        HEDGE_EVERY, IdBatch, IdGenerator, IdOrder, IdRun, InvalidName, LayoutError,
        MemoryAuthority, NameKind, NumberConflict, OneAtATime, PROBE_EVERY, Pick, Preference,
        RangeLayout, Recourse, Sequenced, ShardedCounter, SharedIdGenerator, Stats, validate_name,
    };
    pub use gdid_engine::{durability, plumbing, sequences, sizing, windows};
}

/// serde helpers for [`Gdid`] (gdid-core's `serde`).
#[cfg(feature = "serde")]
pub use gdid_core::serde;

/// BSON conversions for [`Gdid`] (gdid-core's `bson`).
#[cfg(feature = "bson")]
pub use gdid_core::bson;

/// The SQL stores: MySQL/MariaDB, PostgreSQL, SQLite (gdid-sql).
#[cfg(any(feature = "sqlite", feature = "mysql", feature = "postgres"))]
pub use gdid_sql as sql;

/// The MongoDB store (gdid-mongo).
#[cfg(feature = "mongodb")]
pub use gdid_mongo as mongo;

/// Authorities over HTTP: the `/v1` API, its client and server (gdid-http).
#[cfg(feature = "http")]
pub use gdid_http as http;

/// UUID generators (gdid-uuid).
#[cfg(feature = "uuid")]
pub use gdid_uuid as uuid;

/// Random ids inserted with retry (gdid-random).
#[cfg(feature = "random")]
pub use gdid_random as random;
