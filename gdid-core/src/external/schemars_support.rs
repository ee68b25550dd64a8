//! [`schemars::JsonSchema`] for [`Gdid`] (feature `schemars`): the string serde writes in
//! readable formats, with a pattern that admits exactly the canonical colon text and hex form
//! of the ids that exist. `Option<Gdid>` is schemars' own `Option` schema around it.

use alloc::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};

use super::text_schema;
use crate::Gdid;

impl JsonSchema for Gdid {
    fn schema_name() -> Cow<'static, str> {
        Cow::Borrowed(text_schema::NAME)
    }

    fn schema_id() -> Cow<'static, str> {
        Cow::Borrowed("gdid_core::Gdid")
    }

    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        json_schema!({
            "type": "string",
            "pattern": text_schema::pattern(),
            "description": text_schema::DESCRIPTION,
            "examples": [text_schema::EXAMPLE],
        })
    }
}
