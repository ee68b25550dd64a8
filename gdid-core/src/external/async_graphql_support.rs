//! The GraphQL scalar `Gdid` (feature `async-graphql`): input and output as the colon text
//! `era:authority:counter`; the hex form is read too. A value that is not an id is an input
//! error that quotes it and says what is wrong with it.

use alloc::format;
use alloc::string::ToString;

use async_graphql::{InputValueError, InputValueResult, Scalar, ScalarType, Value};

use crate::Gdid;

/// A GDID, `era:authority:counter` in decimal (the 24-digit hex form is read too).
#[Scalar(name = "Gdid")]
impl ScalarType for Gdid {
    fn parse(value: Value) -> InputValueResult<Self> {
        match &value {
            Value::String(text) => text.parse().map_err(|error| {
                InputValueError::custom(format!("{text:?} is not a GDID: {error}"))
            }),
            _ => Err(InputValueError::expected_type(value)),
        }
    }

    fn is_valid(value: &Value) -> bool {
        matches!(value, Value::String(_))
    }

    fn to_value(&self) -> Value {
        Value::String(self.to_string())
    }
}
