//! Every reply that is not a success: a status, a code and a message ([`ErrorReply`]), never a
//! store's error text or a secret (those go to the server's log).

use axum::Json;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use gdid_engine::{AuthorityError, Error, ErrorDetail, ErrorKind, FailureCause, Recourse};
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
        let said = Said {
            by_request: matches!(
                error,
                AuthorityError::InvalidName(_) | AuthorityError::InvalidSize(_)
            ),
            switched: matches!(error, AuthorityError::Switched { .. }),
        };
        ApiError::decided(what, error.kind(), said, error)
    }

    /// What a client is told of a generator's error; the error itself is logged with `what`.
    pub(crate) fn from_generator(what: &str, error: &Error) -> Self {
        let detail = error.detail();
        if let ErrorDetail::Closed { .. } = detail {
            return ApiError::new(
                StatusCode::SERVICE_UNAVAILABLE,
                "shutting_down",
                "the server is shutting down: ask another authority",
            );
        }
        let first_cause = match detail {
            ErrorDetail::Unavailable { causes, .. } | ErrorDetail::Timeout { causes, .. } => {
                causes.first().map(|failure| &failure.cause)
            }
            _ => None,
        };
        let said = Said {
            by_request: matches!(
                detail,
                ErrorDetail::InvalidName(_) | ErrorDetail::InvalidCount { .. }
            ),
            switched: matches!(detail, ErrorDetail::Switched { .. })
                || matches!(first_cause, Some(FailureCause::Error(e))
                    if matches!(**e, AuthorityError::Switched { .. })),
        };
        ApiError::decided(what, error.kind(), said, error)
    }

    /// The answer to an error of `kind`: its status from the one decision
    /// ([`ErrorKind::recourse`]): a transient refusal is 503 with `Retry-After` (try again, or
    /// another authority), a lasting one is final (409 for an exhausted sequence, 500 for what
    /// the server's operator repairs or configures), and one the request itself caused is 400.
    fn decided(what: &str, kind: ErrorKind, said: Said, error: &dyn std::error::Error) -> Self {
        if said.by_request {
            return ApiError::new(StatusCode::BAD_REQUEST, "bad_request", error.to_string());
        }
        warn!(%error, "{what} failed");
        match (kind.recourse(), kind) {
            (Recourse::Again | Recourse::Next, _) => ApiError::unavailable(
                "the authority's store did not answer: try again, or another authority",
            ),
            (_, ErrorKind::Exhausted) => ApiError::new(
                StatusCode::CONFLICT,
                "exhausted",
                "the sequence is exhausted: every id of every era was issued",
            ),
            (_, ErrorKind::Corrupt) => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "corrupt",
                "the store's counter record is corrupt: see the server's log",
            ),
            (_, ErrorKind::Foreign) if said.switched => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "switched",
                "the store's record was last written on another database server (a failover or \
                 a restore) and waits for an operator: see the server's log; ask another \
                 authority",
            ),
            _ => ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "misconfigured",
                "the server's store is set up wrongly: see the server's log",
            ),
        }
    }
}

/// What an error says beyond its kind, for the code of its answer.
#[derive(Debug, Clone, Copy)]
struct Said {
    /// The request's own names or sizes are refused (400).
    by_request: bool,
    /// A record last written on another database server ("switched").
    switched: bool,
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
