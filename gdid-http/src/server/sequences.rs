//! The sequences each token has used (`POST /v1/blocks` and `POST /v1/ids`), at most a bound of
//! them: each is a row in the store and a metrics series, so that one token holder cannot make
//! them without end. Beyond, 403 `forbidden` saying the bound and how to raise it, before the
//! store is asked; the sequences it used before are still served. Counted since the server
//! started (a restart counts again), and kept for the tokens of every tokens file read since.

use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, PoisonError};

use axum::http::StatusCode;

use super::ApiError;
use super::tokens::Digest;

/// The sequences, `(scope, sequence)`, each token has used.
pub(crate) struct Used {
    /// The most one token may use (0: no bound).
    max: usize,
    by_token: Mutex<HashMap<Digest, HashSet<(String, String)>>>,
}

impl Used {
    /// At most `max` sequences for each token (0: no bound).
    pub(crate) fn new(max: usize) -> Self {
        Used {
            max,
            by_token: Mutex::new(HashMap::new()),
        }
    }

    /// Whether `token` may use `scope`'s `sequence`: one it used before, or one more within the
    /// bound (then counted); else a 403 saying the bound.
    pub(crate) fn admit(
        &self,
        token: &Digest,
        scope: &str,
        sequence: &str,
    ) -> Result<(), ApiError> {
        if self.max == 0 {
            return Ok(());
        }
        let mut by_token = self.by_token.lock().unwrap_or_else(PoisonError::into_inner);
        let used = by_token.entry(*token).or_default();
        let key = (scope.to_owned(), sequence.to_owned());
        if used.contains(&key) {
            return Ok(());
        }
        if used.len() >= self.max {
            return Err(ApiError::new(
                StatusCode::FORBIDDEN,
                "forbidden",
                format!(
                    "the bearer token has used {} sequences, this server's most for one token: \
                     it may go on with those, not begin sequence {sequence:?} of scope {scope:?} \
                     (raise the bound with `gdid serve --max-sequences-per-token N`, or \
                     ServerBuilder::max_sequences_per_token)",
                    self.max
                ),
            ));
        }
        used.insert(key);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_token_has_its_own_bound() {
        let used = Used::new(2);
        let (one, two) = ([1; 32], [2; 32]);
        used.admit(&one, "shop", "a").unwrap();
        used.admit(&one, "shop", "b").unwrap();
        used.admit(&one, "shop", "a").unwrap();
        let refused = used.admit(&one, "hr", "a").unwrap_err();
        assert_eq!(
            (refused.status, refused.code),
            (StatusCode::FORBIDDEN, "forbidden")
        );
        assert!(
            refused.message.contains("used 2 sequences"),
            "{}",
            refused.message
        );
        used.admit(&two, "hr", "a").unwrap();
    }

    #[test]
    fn no_bound_keeps_nothing() {
        let used = Used::new(0);
        for n in 0..1000 {
            used.admit(&[0; 32], "shop", &n.to_string()).unwrap();
        }
        assert!(used.by_token.lock().unwrap().is_empty());
    }
}
