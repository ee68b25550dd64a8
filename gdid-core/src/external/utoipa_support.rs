//! [`utoipa::ToSchema`] and [`utoipa::PartialSchema`] for [`Gdid`] (feature `utoipa`): in an
//! OpenAPI document a `Gdid` field, body or path parameter is the string serde writes, with the
//! same pattern as the JSON Schema of the `schemars` feature.

use alloc::borrow::Cow;

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};
use utoipa::{PartialSchema, ToSchema};

use super::text_schema;
use crate::Gdid;

impl PartialSchema for Gdid {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(text_schema::pattern()))
            .description(Some(text_schema::DESCRIPTION))
            .examples([text_schema::EXAMPLE])
            .build()
            .into()
    }
}

impl ToSchema for Gdid {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed(text_schema::NAME)
    }
}
