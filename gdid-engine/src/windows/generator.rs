//! [`WindowGenerator`]: `u64` ids from the open windows of the shards.

use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::Mutex;

use super::{FIRST_VALUE, VALUE_MAX, WindowShard};
use crate::{Error, ErrorDetail, IdBatch, IdGenerator, NameKind, backend::validate_name};

/// Serves `u64` ids from windows the [`WindowAgent`](super::WindowAgent) opened on the shards:
/// `batch` values at a time from the first open window of a shard (shards taken in turn, the
/// next one when a shard fails or has no open window), then one by one from memory.
///
/// Ids are unique across every client and shard; they increase per batch, not globally.
#[derive(Debug)]
pub struct WindowGenerator<S> {
    shards: Vec<(String, S)>,
    sequence: String,
    batch: u64,
    turn: AtomicUsize,
    /// The values taken and not served yet: `next..end`.
    cached: Mutex<(u64, u64)>,
}

impl<S: WindowShard> WindowGenerator<S> {
    /// A generator of `sequence` over `shards` (label, shard), taking `batch` values at a time.
    ///
    /// # Errors
    ///
    /// [`ErrorDetail::InvalidName`](crate::ErrorDetail::InvalidName) for a bad sequence name;
    /// [`ErrorDetail::InvalidConfig`](crate::ErrorDetail::InvalidConfig) for no shard or a batch of
    /// 0 or above `i64::MAX`.
    pub fn new(shards: Vec<(String, S)>, sequence: &str, batch: u64) -> Result<Self, Error> {
        validate_name(NameKind::Sequence, sequence)?;
        if shards.is_empty() || batch == 0 || batch > VALUE_MAX {
            return Err(Error::invalid_config(
                "at least one shard, and a batch of 1 to i64::MAX",
            ));
        }
        Ok(WindowGenerator {
            shards,
            sequence: sequence.to_owned(),
            batch,
            turn: AtomicUsize::new(0),
            cached: Mutex::new((0, 0)),
        })
    }

    /// Up to `n` values from the first shard (in turn) that has an open window, never one below
    /// [`FIRST_VALUE`] (a window written before windows started at 1 may start at 0: that value
    /// is taken and dropped).
    async fn take(&self, n: u64) -> Result<(u64, u64), Error> {
        loop {
            let (start, count) = self.take_any(n).await?;
            let (first, end) = (start.max(FIRST_VALUE), start + count);
            if first < end {
                return Ok((first, end - first));
            }
        }
    }

    /// Up to `n` values from the first shard (in turn) that has an open window.
    async fn take_any(&self, n: u64) -> Result<(u64, u64), Error> {
        if n > VALUE_MAX {
            return Err(Error::invalid_count(n, "above i64::MAX"));
        }
        let first = self.turn.fetch_add(1, Ordering::Relaxed);
        let mut causes = Vec::new();
        let mut corrupt = false;
        let mut switched = Vec::new();
        for i in 0..self.shards.len() {
            let (label, shard) = &self.shards[(first + i) % self.shards.len()];
            match shard.take(&self.sequence, n).await {
                Ok(Some((start, count)))
                    if (1..=n).contains(&count)
                        && start.checked_add(count).is_some_and(|e| e <= VALUE_MAX) =>
                {
                    return Ok((start, count));
                }
                Ok(Some((start, count))) => {
                    return Err(Error::corrupt(format!(
                        "shard {label} gave {count} values from {start} of {} when asked for \
                         {n}",
                        self.sequence
                    )));
                }
                Ok(None) => causes.push(format!("{label}: no open window")),
                Err(e) => {
                    corrupt |= S::is_corrupt(&e);
                    if S::is_switched(&e) {
                        switched.push(label.clone());
                    }
                    causes.push(format!("{label}: {e}"));
                }
            }
        }
        if !switched.is_empty() {
            let sequence = &self.sequence;
            return Err(ErrorDetail::Switched {
                record: format!("the open windows of {sequence} on {}", switched.join(", ")),
                remedy: format!(
                    "their values may have been handed out by the lost copy, and a u64 has no \
                     era to move to: close them and skip past what the copy may have opened \
                     (gdid sequences skip-windows --store URL --sequence {sequence} --by N, \
                     N at least the values its windows held since the copy's last update)"
                ),
            }
            .into());
        }
        let causes = causes.join("; ");
        if corrupt {
            return Err(Error::corrupt(format!(
                "no window of {} could serve: {causes}",
                self.sequence
            )));
        }
        Err(Error::exhausted(format!(
            "no window of {} could serve: {causes} (is the agent running?)",
            self.sequence
        )))
    }
}

impl<S: WindowShard> IdGenerator for WindowGenerator<S> {
    type Id = u64;

    async fn next_id(&self) -> Result<u64, Error> {
        let mut cached = self.cached.lock().await;
        if cached.0 >= cached.1 {
            let (start, count) = self.take(self.batch).await?;
            *cached = (start, start + count);
        }
        let id = cached.0;
        cached.0 += 1;
        Ok(id)
    }

    async fn next_ids(&self, n: u64) -> Result<IdBatch<u64>, Error> {
        let mut batch = IdBatch::for_count(n)?;
        let mut left = n;
        while left > 0 {
            let (start, count) = self.take(left).await?;
            batch.push_run(start, count);
            left -= count;
        }
        Ok(batch)
    }
}
