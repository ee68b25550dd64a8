//! Every reply that is not a success: a status, a code and a message ([`ErrorReply`]), never a
//! store's error text or a secret (those go to the server's log).

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use gdid_engine::{AuthorityError, AuthorityFailure, Error, ErrorDetail, ErrorKind, FailureCause};
use tracing::warn;

use crate::wire::{BadRequest, ErrorBody, ErrorReply};

/// A refused or failed request, as the client sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// The code of [`ErrorBody`].
    pub code: &'static str,
    /// The message of [`ErrorBody`].
    pub message: String,
    /// Seconds to wait before trying again (`Retry-After`); a 503 without it says 1.
    pub retry_after: Option<u64>,
}

impl ApiError {
    pub(crate) fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            status,
            code,
            message: message.into(),
            retry_after: None,
        }
    }

    pub(crate) fn unauthorized(message: &str) -> Self {
        ApiError::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }

    pub(crate) fn unavailable(message: &str) -> Self {
        ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }

    /// What a client is told of an authority's error; the error itself is logged with `what`.
    pub(crate) fn from_authority(what: &str, error: &AuthorityError) -> Self {
        match error {
            AuthorityError::InvalidName(_) | AuthorityError::InvalidSize(_) => {
                ApiError::new(StatusCode::BAD_REQUEST, "bad_request", error.to_string())
            }
            AuthorityError::Switched { .. } => ApiError::switched(what, error),
            _ => ApiError::from_kind(what, error.kind(), error),
        }
    }

    /// What a client is told of a generator's error; the error itself is logged with `what`.
    pub(crate) fn from_generator(what: &str, error: &Error) -> Self {
        match error.detail() {
            ErrorDetail::InvalidName(_) | ErrorDetail::InvalidCount { .. } => {
                ApiError::new(StatusCode::BAD_REQUEST, "bad_request", error.to_string())
            }
            ErrorDetail::Closed { .. } => ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "shutting_down",
                "the server is shutting down: ask another authority",
            ),
            ErrorDetail::Switched { .. } => ApiError::switched(what, error),
            ErrorDetail::Unavailable { causes, .. } | ErrorDetail::Timeout { causes, .. } => {
                // The server's own store is the only authority: when it said why, that is the
                // answer (exhausted, corrupt, misconfigured are final), not an outage.
                ApiError::from_kind(what, said_by_every(causes).unwrap_or(error.kind()), error)
            }
            _ => ApiError::from_kind(what, error.kind(), error),
        }
    }

    /// A record last written on another database server (a failover, a restore) that an
    /// operator must move first: nothing is issued from it, another authority may serve.
    fn switched(what: &str, error: &dyn std::error::Error) -> Self {
        warn!(%error, "{what} refused");
        ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "switched",
            "the store's record was last written on another database server (a failover or a \
             restore) and waits for an operator: see the server's log; ask another authority",
        )
    }

    fn from_kind(what: &str, kind: ErrorKind, error: &dyn std::error::Error) -> Self {
        warn!(%error, "{what} failed");
        match kind {
            ErrorKind::Exhausted => ApiError::new(
                StatusCode::CONFLICT,
                "exhausted",
                "the sequence is exhausted: every id of every era was issued",
            ),
            ErrorKind::Corrupt => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "corrupt",
                "the store's counter record is corrupt: see the server's log",
            ),
            ErrorKind::Config => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "misconfigured",
                "the server's store is set up wrongly: see the server's log",
            ),
            _ => ApiError::unavailable(
                "the authority's store did not answer: try again, or another authority",
            ),
        }
    }
}

/// The kind every authority's refusal shares when each refused with an answer that no wait
/// changes (the sequence exhausted, the record corrupt, the store misconfigured); `None` when
/// one timed out, failed to answer, or said something else.
fn said_by_every(causes: &[AuthorityFailure]) -> Option<ErrorKind> {
    let mut kinds = causes.iter().map(|failure| match &failure.cause {
        FailureCause::Error(error) => Some(error.kind()),
        _ => None,
    });
    let first = kinds.next()??;
    let lasting = matches!(
        first,
        ErrorKind::Exhausted | ErrorKind::Corrupt | ErrorKind::Config
    );
    (lasting && kinds.all(|kind| kind == Some(first))).then_some(first)
}

impl From<BadRequest> for ApiError {
    fn from(error: BadRequest) -> Self {
        ApiError::new(StatusCode::BAD_REQUEST, "bad_request", error.0)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let retry = match (self.retry_after, self.status) {
            (Some(seconds), _) => Some(seconds),
            (None, StatusCode::SERVICE_UNAVAILABLE) => Some(1),
            (None, _) => None,
        };
        let unauthorized = self.status == StatusCode::UNAUTHORIZED;
        let mut response = (
            self.status,
            Json(ErrorReply {
                error: ErrorBody {
                    code: self.code.to_owned(),
                    message: self.message,
                },
            }),
        )
            .into_response();
        let headers = response.headers_mut();
        if let Some(seconds) = retry {
            headers.insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if unauthorized {
            headers.insert(
                header::WWW_AUTHENTICATE,
                HeaderValue::from_static("Bearer realm=\"gdid\""),
            );
        }
        response
    }
}
