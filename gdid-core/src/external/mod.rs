//! Optional integrations, one file each, holding impls and helpers only.

#[cfg(feature = "serde")]
pub mod serde_support;

#[cfg(feature = "bson")]
pub mod bson_support;

#[cfg(any(
    feature = "sqlx-mysql",
    feature = "sqlx-postgres",
    feature = "sqlx-sqlite"
))]
mod sqlx_support;

#[cfg(feature = "diesel")]
mod diesel_support;

#[cfg(feature = "postgres-types")]
mod postgres_types_support;

#[cfg(feature = "sea-orm")]
mod sea_orm_support;

#[cfg(any(feature = "sqlx-postgres", feature = "postgres-types"))]
pub(crate) mod native_postgres;

#[cfg(feature = "arbitrary")]
mod arbitrary_support;

#[cfg(feature = "proptest")]
pub mod proptest_support;

#[cfg(any(feature = "schemars", feature = "utoipa"))]
mod text_schema;

#[cfg(feature = "schemars")]
mod schemars_support;

#[cfg(feature = "utoipa")]
mod utoipa_support;

#[cfg(feature = "async-graphql")]
mod async_graphql_support;

#[cfg(feature = "rusqlite")]
mod rusqlite_support;

#[cfg(feature = "zerocopy")]
pub mod zerocopy_support;
