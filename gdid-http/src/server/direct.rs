//! The server's own block generators, one per sequence, behind `POST /v1/ids`: ids for callers
//! that cannot run a generator of their own, served from memory like any generator's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::time::Instant;

use gdid_core::Gdid;
use gdid_engine::{BlockGenerator, DynAuthority, GeneratorConfig, IdBatch};
use gdid_engine::{Error, ErrorDetail};

use super::ApiError;

/// The generators, made on first use, at most `max` of them, and `per_scope` of one scope.
pub(crate) struct Direct {
    authority: Arc<dyn DynAuthority>,
    config: GeneratorConfig,
    max: usize,
    per_scope: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    generators: HashMap<(String, String), Entry>,
    closed: bool,
}

struct Entry {
    generator: Arc<BlockGenerator>,
    used: Instant,
}

/// How long a generator must have been idle to make room for another sequence's.
const IDLE: Duration = Duration::from_secs(10);

impl Direct {
    pub(crate) fn new(
        authority: Arc<dyn DynAuthority>,
        config: GeneratorConfig,
        max: usize,
    ) -> Self {
        Direct {
            authority,
            config,
            max,
            // A quarter: one tenant leaves three quarters of the places to the others.
            per_scope: (max / 4).max(1),
            state: Mutex::default(),
        }
    }

    /// `count` ids of (`scope`, `sequence`).
    pub(crate) async fn ids(
        &self,
        scope: &str,
        sequence: &str,
        count: u64,
    ) -> Result<IdBatch<Gdid>, ApiError> {
        let generator = self.generator(scope, sequence)?;
        generator
            .next_ids(count)
            .await
            .map_err(|error: Error| ApiError::from_generator("issuing ids", &error))
    }

    fn generator(&self, scope: &str, sequence: &str) -> Result<Arc<BlockGenerator>, ApiError> {
        let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
        if state.closed {
            return Err(ApiError::from_generator(
                "issuing ids",
                &ErrorDetail::Closed {
                    scope: scope.to_owned(),
                    sequence: sequence.to_owned(),
                }
                .into(),
            ));
        }
        let key = (scope.to_owned(), sequence.to_owned());
        let now = Instant::now();
        if let Some(entry) = state.generators.get_mut(&key) {
            entry.used = now;
            return Ok(entry.generator.clone());
        }
        let of_scope = state.generators.keys().filter(|(s, _)| s == scope).count();
        let scope_full = of_scope >= self.per_scope;
        if scope_full || state.generators.len() >= self.max {
            // Room for one more: the generator idle longest (of this scope, when the scope holds
            // its share), if idle long enough, is closed (its unused ids go back), so one caller
            // cannot hold every place for good.
            let idlest = state
                .generators
                .iter()
                .filter(|((s, _), _)| !scope_full || s == scope)
                .min_by_key(|(_, entry)| entry.used)
                .filter(|(_, entry)| now.duration_since(entry.used) >= IDLE)
                .map(|(key, _)| key.clone());
            match idlest.and_then(|key| state.generators.remove(&key)) {
                Some(entry) => {
                    tokio::spawn(async move {
                        let _ = entry.generator.close().await;
                    });
                }
                None => {
                    let (limit, of) = if scope_full {
                        (self.per_scope, format!("scope {scope:?}"))
                    } else {
                        (self.max, "all scopes".to_owned())
                    };
                    return Err(ApiError::new(
                        axum::http::StatusCode::SERVICE_UNAVAILABLE,
                        "busy",
                        format!(
                            "this server issues ids of at most {limit} sequences of {of}, each \
                             used within {IDLE:?}: try again, or allocate blocks instead"
                        ),
                    ));
                }
            }
        }
        let generator = BlockGenerator::builder(scope, sequence)
            .config(self.config.clone())
            .shared_authority(self.authority.clone())
            .build()
            .map(Arc::new)
            .map_err(|error| ApiError::from_generator("making a generator", &error))?;
        state.generators.insert(
            key,
            Entry {
                generator: generator.clone(),
                used: now,
            },
        );
        Ok(generator)
    }

    /// Refuses further requests and closes every generator: how many ids went back.
    /// Closes every generator at once, each giving its unused ids back, for at most `deadline`
    /// in all: those not done by then are abandoned (their ids lost, never issued again). How
    /// many ids went back.
    pub(crate) async fn close(&self, deadline: Duration) -> u64 {
        let generators: Vec<_> = {
            let mut state = self.state.lock().unwrap_or_else(PoisonError::into_inner);
            state.closed = true;
            state.generators.drain().map(|(_, e)| e.generator).collect()
        };
        let mut closing = tokio::task::JoinSet::new();
        for generator in generators {
            closing.spawn(async move { generator.close().await });
        }
        let mut returned = 0;
        let all = async {
            while let Some(closed) = closing.join_next().await {
                match closed {
                    Ok(Ok(n)) => returned += n,
                    Ok(Err(error)) => tracing::warn!(%error, "closing a generator of /v1/ids"),
                    Err(error) => tracing::warn!(%error, "closing a generator of /v1/ids"),
                }
            }
        };
        if tokio::time::timeout(deadline, all).await.is_err() {
            tracing::warn!(
                left = closing.len(),
                "generators of /v1/ids not closed within {deadline:?}: their unused ids are lost"
            );
        }
        returned
    }
}
