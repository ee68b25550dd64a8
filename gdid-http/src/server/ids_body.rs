//! The body of a `POST /v1/ids` reply: the ids spelled straight into one buffer of the reply's
//! size (no string kept per id), holding the reply's memory until the body is dropped, after
//! its last byte is written or with its connection.

use axum::body::{Body, Bytes};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use gdid_core::{Form, Gdid};
use gdid_engine::IdBatch;
use http_body_util::{BodyExt, Full};
use serde::ser::{Serialize, SerializeStruct, Serializer};

use super::ApiError;
use super::memory::Held;
use crate::wire::IdsReply;

/// An [`IdsReply`] of `ids`, spelled as it is written.
struct Spelled<'a> {
    form: Form,
    ids: &'a IdBatch<Gdid>,
}

/// The `ids` field of a [`Spelled`].
struct Each<'a>(&'a Spelled<'a>);

impl Serialize for Spelled<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut reply = serializer.serialize_struct("IdsReply", 2)?;
        reply.serialize_field("form", &self.form)?;
        reply.serialize_field("ids", &Each(self))?;
        reply.end()
    }
}

impl Serialize for Each<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let form = self.0.form;
        serializer.collect_seq(self.0.ids.iter().map(|id| form.write(id)))
    }
}

/// The reply of `ids` in `form`, whose body keeps `held` until it is dropped.
pub(crate) fn ids_reply(form: Form, ids: &IdBatch<Gdid>, held: Held) -> Result<Response, ApiError> {
    // The reply's size, as held for it (a hint only, so capped).
    let mut json = Vec::with_capacity(IdsReply::size(form, ids.len()).min(64 << 20));
    serde_json::to_writer(&mut json, &Spelled { form, ids }).map_err(|error| {
        tracing::error!(%error, "spelling ids");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "the ids could not be spelled",
        )
    })?;
    let body = Full::new(Bytes::from(json)).map_frame(move |frame| {
        let _ = &held;
        frame
    });
    Ok((
        [(header::CONTENT_TYPE, "application/json")],
        Body::new(body),
    )
        .into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spelled_as_an_ids_reply_and_within_its_size() {
        let mut ids = IdBatch::gdids();
        ids.push_run(
            Gdid::from_parts(u32::MAX, 15, gdid_core::COUNTER_MAX - 2).unwrap(),
            3,
        );
        ids.push_run(Gdid::from_parts(7, 1, 1).unwrap(), 2);
        for form in Form::ALL {
            let json = serde_json::to_vec(&Spelled { form, ids: &ids }).unwrap();
            let reply: IdsReply = serde_json::from_slice(&json).unwrap();
            let expected: Vec<String> = ids.iter().map(|id| form.write(id)).collect();
            assert_eq!(
                reply,
                IdsReply {
                    form,
                    ids: expected
                }
            );
            assert!(
                json.len() <= IdsReply::size(form, ids.len()),
                "{form:?}: {}",
                json.len()
            );
        }
    }
}
