//! [`WindowAgent`]: keeps every shard supplied with open windows that never overlap.

use std::collections::BTreeSet;

use gdid_core::generator::{NameKind, validate_name};

use super::shard::{self, Window};
use crate::store::SqlStore;

/// Why the agent did not run, or stopped.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AgentError {
    /// A shard did not answer: the agent runs only when it can see every shard (the highest
    /// window end may be on the missing one).
    #[error("shard {shard} is unreachable, so the agent will not run: {source}")]
    ShardUnreachable {
        /// The shard's label.
        shard: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// A statement failed on a shard.
    #[error("shard {shard}: {source}")]
    Shard {
        /// The shard's label.
        shard: String,
        /// The driver's error.
        #[source]
        source: sqlx::Error,
    },
    /// A setting that cannot work.
    #[error("invalid agent configuration: {0}")]
    Config(String),
    /// Windows would pass `i64::MAX`.
    #[error("the value space of {0} is used up")]
    Exhausted(String),
}

/// What a run did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AgentReport {
    /// Each window opened: sequence, shard label, window.
    pub created: Vec<(String, String, Window)>,
}

/// Keeps at least `min_open_windows` open windows of `window_size` values on every shard.
///
/// ```no_run
/// use gdid_sql::{SqlStore, WindowAgent};
///
/// # #[tokio::main]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let mut agent = WindowAgent::new(1_000_000, 2)?;
/// agent.add_shard("eu", SqlStore::connect("mysql://root@127.0.0.1:3306/test").await?).await?;
/// agent.add_shard("us", SqlStore::connect("postgres://postgres@127.0.0.1:5432/test").await?).await?;
/// let report = agent.run_once(&["order"]).await?;
/// println!("opened {} windows", report.created.len());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct WindowAgent {
    /// In label order: the order claims are made in.
    shards: Vec<(String, SqlStore)>,
    window_size: u64,
    min_open_windows: u64,
}

/// Attempts at claiming one window before giving up (each lost attempt means another agent made
/// progress).
const CLAIM_ATTEMPTS: usize = 1_000;

impl WindowAgent {
    /// An agent with no shard yet.
    ///
    /// # Errors
    ///
    /// [`AgentError::Config`] for a window size of 0 or above `i64::MAX`.
    pub fn new(window_size: u64, min_open_windows: u64) -> Result<WindowAgent, AgentError> {
        if window_size == 0 || i64::try_from(window_size).is_err() {
            return Err(AgentError::Config(format!(
                "window size {window_size}: expected 1 to i64::MAX"
            )));
        }
        Ok(WindowAgent {
            shards: Vec::new(),
            window_size,
            min_open_windows,
        })
    }

    /// Adds a shard and creates its tables; the next run supplies it with windows.
    ///
    /// # Errors
    ///
    /// [`AgentError::ShardUnreachable`] when the tables cannot be created.
    pub async fn add_shard(&mut self, label: &str, store: SqlStore) -> Result<(), AgentError> {
        shard::ensure_schema(&store)
            .await
            .map_err(|source| AgentError::ShardUnreachable {
                shard: label.to_owned(),
                source,
            })?;
        self.shards.push((label.to_owned(), store));
        self.shards.sort_by(|a, b| a.0.cmp(&b.0));
        Ok(())
    }

    /// The shards, in claim order.
    pub fn shards(&self) -> impl Iterator<Item = (&str, &SqlStore)> {
        self.shards
            .iter()
            .map(|(label, store)| (label.as_str(), store))
    }

    /// One pass: each sequence named (or, when none is named, every sequence found on a shard)
    /// gets `min_open_windows` open windows on every shard.
    ///
    /// # Errors
    ///
    /// [`AgentError::ShardUnreachable`] before anything is written if any shard does not
    /// answer; [`AgentError::Shard`] if a statement fails midway (windows opened before it stay,
    /// and are correct).
    pub async fn run_once(&self, sequences: &[&str]) -> Result<AgentReport, AgentError> {
        if self.shards.is_empty() {
            return Err(AgentError::Config("no shard: add at least one".into()));
        }
        let mut names: BTreeSet<String> = BTreeSet::new();
        for name in sequences {
            validate_name(NameKind::Sequence, name)
                .map_err(|e| AgentError::Config(e.to_string()))?;
            names.insert((*name).to_owned());
        }
        for (label, store) in &self.shards {
            let unreachable = |source| AgentError::ShardUnreachable {
                shard: label.clone(),
                source,
            };
            shard::ping(store).await.map_err(unreachable)?;
            if sequences.is_empty() {
                names.extend(shard::sequences(store).await.map_err(unreachable)?);
            }
        }
        let mut report = AgentReport::default();
        for sequence in &names {
            for (label, store) in &self.shards {
                let open = shard::open_windows(store, sequence)
                    .await
                    .map_err(|source| self.shard_error(label, source))?;
                for _ in open..self.min_open_windows {
                    let window = self.open_window(sequence, store, label).await?;
                    tracing::info!(%sequence, shard = %label, start = window.start, end = window.end, "window opened");
                    report
                        .created
                        .push((sequence.clone(), label.clone(), window));
                }
            }
        }
        Ok(report)
    }

    /// Claims the next window on every shard, then opens it on `target`.
    async fn open_window(
        &self,
        sequence: &str,
        target: &SqlStore,
        target_label: &str,
    ) -> Result<Window, AgentError> {
        for _ in 0..CLAIM_ATTEMPTS {
            let mut high = 0;
            for (label, store) in &self.shards {
                let shard_high = shard::high_water(store, sequence)
                    .await
                    .map_err(|source| self.shard_error(label, source))?;
                high = high.max(shard_high);
            }
            let end = high
                .checked_add(self.window_size)
                .filter(|end| i64::try_from(*end).is_ok())
                .ok_or_else(|| AgentError::Exhausted(sequence.to_owned()))?;
            let (start_sql, end_sql) = (sql_i64(high), sql_i64(end));
            let mut claimed_everywhere = true;
            for (label, store) in &self.shards {
                let claimed = shard::claim(store, sequence, start_sql, end_sql)
                    .await
                    .map_err(|source| self.shard_error(label, source))?;
                if !claimed {
                    claimed_everywhere = false;
                    break;
                }
            }
            if claimed_everywhere {
                shard::insert_window(target, sequence, start_sql, end_sql)
                    .await
                    .map_err(|source| self.shard_error(target_label, source))?;
                return Ok(Window {
                    start: high,
                    end,
                    next_hi: high,
                });
            }
        }
        Err(AgentError::Config(format!(
            "lost {CLAIM_ATTEMPTS} claims in a row for {sequence}: too many agents at once?"
        )))
    }

    /// Every window of `sequence` on every shard, in claim order of the shards.
    ///
    /// # Errors
    ///
    /// [`AgentError::Shard`] when a shard cannot be read.
    pub async fn windows(&self, sequence: &str) -> Result<Vec<(String, Window)>, AgentError> {
        let mut all = Vec::new();
        for (label, store) in &self.shards {
            let windows = shard::windows(store, sequence)
                .await
                .map_err(|source| self.shard_error(label, source))?;
            all.extend(windows.into_iter().map(|w| (label.clone(), w)));
        }
        Ok(all)
    }

    fn shard_error(&self, label: &str, source: sqlx::Error) -> AgentError {
        AgentError::Shard {
            shard: label.to_owned(),
            source,
        }
    }
}

/// Window bounds are checked against `i64::MAX` before they are bound.
fn sql_i64(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX)
}
