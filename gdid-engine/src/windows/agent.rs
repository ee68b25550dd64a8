//! [`WindowAgent`]: keeps every shard supplied with open windows that never overlap.

use std::collections::BTreeSet;

use super::{FIRST_VALUE, VALUE_MAX, Window, WindowShard};
use crate::{NameKind, backend::validate_name};

/// Why the agent did not run, or stopped; `E` is the shard's error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError<E: std::error::Error + 'static> {
    /// A shard did not answer: the agent runs only when it can see every shard (the highest
    /// window end may be on the missing one).
    #[error("shard {shard} is unreachable, so the agent will not run: {source}")]
    ShardUnreachable {
        /// The shard's label.
        shard: String,
        /// The store's error.
        #[source]
        source: E,
    },
    /// An operation failed on a shard.
    #[error("shard {shard}: {source}")]
    Shard {
        /// The shard's label.
        shard: String,
        /// The store's error.
        #[source]
        source: E,
    },
    /// A setting that cannot work.
    #[error("invalid agent configuration: {0}")]
    Config(String),
    /// Windows would pass `i64::MAX`.
    #[error("the value space of {0} is used up")]
    Exhausted(String),
    /// Other agents won every claim this one tried.
    #[error("lost {attempts} claims in a row for {sequence}: too many agents at once?")]
    Contended {
        /// The sequence.
        sequence: String,
        /// How many claims were lost.
        attempts: usize,
    },
}

/// What a run did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AgentReport {
    /// Each window opened: sequence, shard label, window.
    pub created: Vec<(String, String, Window)>,
    /// Used-up windows deleted ([`WindowAgent::keep_used_windows`]), on all shards together.
    pub pruned: u64,
}

/// Keeps at least `min_open_windows` open windows of `window_size` values on every shard, and
/// (with [`keep_used_windows`](Self::keep_used_windows)) deletes the used-up windows beyond a
/// history, so that a long-running shard does not slow down.
///
/// ```
/// use gdid_engine::windows::{WindowAgent, WindowShard};
///
/// # #[allow(dead_code)]
/// # async fn supply<S: WindowShard>(eu: S, us: S) -> Result<(), Box<dyn std::error::Error>> {
/// let mut agent = WindowAgent::new(1_000_000, 2)?;
/// agent.add_shard("eu", eu).await?;
/// agent.add_shard("us", us).await?;
/// let report = agent.run_once(&["order"]).await?;
/// println!("opened {} windows", report.created.len());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct WindowAgent<S> {
    /// In identity order: the order claims are made in, the same for every agent.
    shards: Vec<Shard<S>>,
    window_size: u64,
    min_open_windows: u64,
    /// Used-up windows each shard keeps per sequence; `None`: the agent deletes none.
    keep_used: Option<u64>,
}

/// One shard of the agent.
#[derive(Debug)]
struct Shard<S> {
    /// The store's own identity ([`WindowShard::identity`]): orders the claims.
    identity: String,
    /// The name given to [`WindowAgent::add_shard`]: for messages only.
    label: String,
    store: S,
}

/// Attempts at claiming one window before giving up (each lost attempt means another agent made
/// progress).
const CLAIM_ATTEMPTS: usize = 1_000;

impl<S: WindowShard> WindowAgent<S> {
    /// An agent with no shard yet.
    ///
    /// # Errors
    ///
    /// [`AgentError::Config`] for a window size of 0 or above `i64::MAX`.
    pub fn new(window_size: u64, min_open_windows: u64) -> Result<Self, AgentError<S::Error>> {
        if window_size == 0 || window_size > VALUE_MAX {
            return Err(AgentError::Config(format!(
                "window size {window_size}: expected 1 to i64::MAX"
            )));
        }
        Ok(WindowAgent {
            shards: Vec::new(),
            window_size,
            min_open_windows,
            keep_used: None,
        })
    }

    /// Makes every run also delete, on each shard and for each sequence it supplies, the
    /// used-up windows but the `keep` latest ([`WindowShard::prune`]). Open windows and the
    /// claims (the chain that keeps agents from overlapping) are never deleted. Without it the
    /// agent deletes nothing, and used-up windows stay until pruned
    /// (`gdid sequences prune-windows`).
    ///
    /// ```
    /// use gdid_engine::windows::{WindowAgent, WindowShard};
    ///
    /// # #[allow(dead_code)]
    /// # fn agent<S: WindowShard>() -> Result<WindowAgent<S>, Box<dyn std::error::Error>> {
    /// let agent = WindowAgent::new(1_000_000, 2)?.keep_used_windows(10);
    /// # Ok(agent)
    /// # }
    /// ```
    #[must_use]
    pub fn keep_used_windows(mut self, keep: u64) -> Self {
        self.keep_used = Some(keep);
        self
    }

    /// Adds a shard, prepares it ([`WindowShard::prepare`]) and reads its identity
    /// ([`WindowShard::identity`], recorded now if the store has none): claims are made in
    /// identity order, the same for every agent whatever the shards are named or the order
    /// they are added in. The next run supplies the shard with windows.
    ///
    /// # Errors
    ///
    /// [`AgentError::ShardUnreachable`] when the shard cannot be prepared;
    /// [`AgentError::Config`] when the label is taken, or the store is one of the agent's
    /// shards already (under another name).
    pub async fn add_shard(&mut self, label: &str, shard: S) -> Result<(), AgentError<S::Error>> {
        if self.shards.iter().any(|s| s.label == label) {
            return Err(AgentError::Config(format!(
                "two shards labelled {label:?}: labels name the shards and must differ"
            )));
        }
        let unreachable = |source| AgentError::ShardUnreachable {
            shard: label.to_owned(),
            source,
        };
        shard.prepare().await.map_err(unreachable)?;
        let candidate = format!("{:032x}", rand::random::<u128>());
        let identity = shard.identity(&candidate).await.map_err(unreachable)?;
        if let Some(same) = self.shards.iter().find(|s| s.identity == identity) {
            return Err(AgentError::Config(format!(
                "shards {:?} and {label:?} are one store (identity {identity}): give each store \
                 once",
                same.label
            )));
        }
        let at = self.shards.partition_point(|s| s.identity < identity);
        self.shards.insert(
            at,
            Shard {
                identity,
                label: label.to_owned(),
                store: shard,
            },
        );
        Ok(())
    }

    /// The shards (label, store), in claim order: by identity.
    pub fn shards(&self) -> impl Iterator<Item = (&str, &S)> {
        self.shards.iter().map(|s| (s.label.as_str(), &s.store))
    }

    /// One pass: each sequence named (or, when none is named, every sequence found on a shard)
    /// gets `min_open_windows` open windows on every shard; then, with
    /// [`keep_used_windows`](Self::keep_used_windows), its used-up windows beyond that history
    /// are deleted.
    ///
    /// # Errors
    ///
    /// [`AgentError::ShardUnreachable`] before anything is written if any shard does not
    /// answer; [`AgentError::Shard`] if an operation fails midway (windows opened before it stay,
    /// and are correct).
    pub async fn run_once(&self, sequences: &[&str]) -> Result<AgentReport, AgentError<S::Error>> {
        if self.shards.is_empty() {
            return Err(AgentError::Config("no shard: add at least one".into()));
        }
        let mut names: BTreeSet<String> = BTreeSet::new();
        for name in sequences {
            validate_name(NameKind::Sequence, name)
                .map_err(|e| AgentError::Config(e.to_string()))?;
            names.insert((*name).to_owned());
        }
        for Shard { label, store, .. } in &self.shards {
            let unreachable = |source| AgentError::ShardUnreachable {
                shard: label.clone(),
                source,
            };
            store.ping().await.map_err(unreachable)?;
            if sequences.is_empty() {
                names.extend(store.sequences().await.map_err(unreachable)?);
            }
        }
        let mut report = AgentReport::default();
        for sequence in &names {
            for shard in &self.shards {
                let open = shard.named(shard.store.open_windows(sequence).await)?;
                let label = &shard.label;
                for _ in open..self.min_open_windows {
                    let window = self.open_window(sequence, shard).await?;
                    tracing::info!(%sequence, shard = %label, start = window.start, end = window.end, "window opened");
                    report
                        .created
                        .push((sequence.clone(), label.clone(), window));
                }
                if let Some(keep) = self.keep_used {
                    report.pruned += shard.named(shard.store.prune(sequence, keep).await)?;
                }
            }
        }
        Ok(report)
    }

    /// Claims the next window on every shard, then opens it on `target`.
    async fn open_window(
        &self,
        sequence: &str,
        target: &Shard<S>,
    ) -> Result<Window, AgentError<S::Error>> {
        for _ in 0..CLAIM_ATTEMPTS {
            // No window holds a value below FIRST_VALUE: the first one starts there.
            let mut high = FIRST_VALUE;
            for shard in &self.shards {
                high = high.max(shard.named(shard.store.high_water(sequence).await)?);
            }
            let end = high
                .checked_add(self.window_size)
                .filter(|end| *end <= VALUE_MAX)
                .ok_or_else(|| AgentError::Exhausted(sequence.to_owned()))?;
            let mut claimed_everywhere = true;
            for shard in &self.shards {
                if !shard.named(shard.store.claim(sequence, high, end).await)? {
                    claimed_everywhere = false;
                    break;
                }
            }
            if claimed_everywhere {
                target.named(target.store.open(sequence, high, end).await)?;
                return Ok(Window {
                    start: high,
                    end,
                    next_hi: high,
                });
            }
        }
        Err(AgentError::Contended {
            sequence: sequence.to_owned(),
            attempts: CLAIM_ATTEMPTS,
        })
    }

    /// Every window of `sequence` on every shard, in claim order of the shards.
    ///
    /// # Errors
    ///
    /// [`AgentError::Shard`] when a shard cannot be read.
    pub async fn windows(
        &self,
        sequence: &str,
    ) -> Result<Vec<(String, Window)>, AgentError<S::Error>> {
        let mut all = Vec::new();
        for shard in &self.shards {
            let windows = shard.named(shard.store.windows(sequence).await)?;
            let label = &shard.label;
            all.extend(windows.into_iter().map(|w| (label.clone(), w)));
        }
        Ok(all)
    }
}

impl<S: WindowShard> Shard<S> {
    /// The outcome of an operation on this shard, its error named with the shard's label.
    fn named<T>(&self, outcome: Result<T, S::Error>) -> Result<T, AgentError<S::Error>> {
        outcome.map_err(|source| AgentError::Shard {
            shard: self.label.clone(),
            source,
        })
    }
}
