//! Closing: the ids reserved and not served go back to their authority, so that a short-lived
//! process (`gdid next --count 5`, a job, a test) does not lose a block on every run.
//!
//! What goes back is what no caller can take any more: the pending block and the rest of the
//! current one, taken out of the shared segment first (so no thread serves them afterwards),
//! each given back with one conditional write that succeeds only while nothing was reserved after
//! it ([`Authority::give_back`](super::super::Authority::give_back)). The slices threads hold are
//! not taken back: only their own thread may serve them, and a slice is at most `max_slice` ids.
//! A crash gives nothing back: the ids in hand are lost, never reused.

use std::sync::Arc;

use tokio::time::Instant;
use tracing::{debug, warn};

use super::super::authority::{Block, DynAuthority};
use super::super::error::AuthorityError;
use super::super::generator_error::Error;
use super::{BlockGenerator, Inner};

impl BlockGenerator {
    /// Closes the generator and every clone of it, giving the ids it holds back to their
    /// authority: a later generator of the sequence (in this process or another) issues them, so
    /// nothing is lost. Waits for an allocation in flight (up to the request timeout), so that
    /// its block goes back too. Returns how many ids went back.
    ///
    /// After `close`, no block is allocated: a call that needs one gets
    /// [`ErrorDetail::Closed`](crate::ErrorDetail::Closed). A thread still serves the slice it
    /// holds (those ids are not given back). Dropping the last clone of a generator that was not
    /// closed gives its ids back the same way, in a task on the current tokio runtime, if there is
    /// one (when the runtime is shutting down the task may not run, and the ids are lost, never
    /// repeated): call `close` where it matters.
    ///
    /// ```
    /// use gdid_engine::{BlockGenerator, MemoryAuthority};
    /// use std::sync::Arc;
    ///
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), gdid_engine::Error> {
    /// let authority = Arc::new(MemoryAuthority::new(1));
    /// let first = BlockGenerator::builder("shop", "order").authority(authority.clone()).build()?;
    /// let a = first.next_ids(5).await?;
    /// assert_eq!(a.iter().last().unwrap().to_string(), "0:1:5");
    /// assert_eq!(first.close().await?, 11); // a block of 16 was reserved
    ///
    /// let second = BlockGenerator::builder("shop", "order").authority(authority).build()?;
    /// assert_eq!(second.next_id().await?.to_string(), "0:1:6"); // nothing lost
    /// # Ok(())
    /// # }
    /// ```
    ///
    /// # Errors
    ///
    /// The first error of an authority that could not take its ids back (a store that is down):
    /// those ids are lost, never repeated. The generator is closed all the same.
    pub async fn close(&self) -> Result<u64, Error> {
        let inner = &self.inner;
        inner.lock_state().closed = true;
        inner.wake_allocator.notify_one();
        inner.changed.notify_waiters(); // callers waiting for a block get `ErrorDetail::Closed`
        inner.wait_for_allocation().await;
        let tails = inner.withdraw_tail();
        give_back_all(
            &inner.scope,
            &inner.sequence,
            &inner.authorities,
            tails,
            inner.config.allocation_timeout,
        )
        .await
    }
}

impl Inner {
    /// Waits until no allocation is in flight, at most the request timeout.
    async fn wait_for_allocation(&self) {
        let deadline = Instant::now() + self.config.request_timeout;
        loop {
            let mut changed = std::pin::pin!(self.changed.notified());
            changed.as_mut().enable();
            if !self.lock_state().in_flight {
                return;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                warn!(scope = %self.scope, sequence = %self.sequence,
                    "closing: an allocation still in flight is not waited for");
                return;
            }
        }
    }

    /// Takes what no caller may serve any more out of the generator: the pending block and the
    /// rest not taken of the current one.
    fn withdraw_tail(&self) -> Vec<Block> {
        let mut st = self.lock_state();
        let pending = st.pending.take();
        // Taken out of the segment under the state lock, as an installation would: from now
        // no thread can take these ids.
        let rest = self
            .current
            .load()
            .take_up_to(u64::MAX)
            .and_then(|taken| taken.to_block().ok());
        drop(st);
        tails(rest, pending)
    }
}

impl Drop for Inner {
    /// The last clone is gone: its ids go back, in a task on the current runtime if there is one.
    fn drop(&mut self) {
        let closed = self.lock_state().closed;
        if closed || tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let tails = self.withdraw_tail();
        if tails.is_empty() {
            return;
        }
        let (scope, sequence) = (self.scope.clone(), self.sequence.clone());
        let authorities = self.authorities.clone();
        let timeout = self.config.allocation_timeout;
        tokio::spawn(async move {
            let _ = give_back_all(&scope, &sequence, &authorities, tails, timeout).await;
        });
    }
}

/// The blocks to give back, the latest first: the pending block, then the rest of the current
/// one. They are never merged, even when the pending block follows the rest directly: each stays
/// the end of a block as its authority sent it, which an authority that checks what it gets back
/// (a server, by the block's lease) recognises; a store takes back the pending block, and then the
/// rest, which its counter then stands right after.
fn tails(rest: Option<Block>, pending: Option<Block>) -> Vec<Block> {
    pending.into_iter().chain(rest).collect()
}

/// Gives each tail back to the authority of its number; how many ids went back, or the first
/// error (the others are still tried).
async fn give_back_all(
    scope: &str,
    sequence: &str,
    authorities: &[Arc<dyn DynAuthority>],
    tails: Vec<Block>,
    timeout: std::time::Duration,
) -> Result<u64, Error> {
    let mut given = 0;
    let mut first_error = None;
    for tail in tails {
        let Some(authority) = authorities.iter().find(|a| a.number() == tail.authority()) else {
            continue;
        };
        let outcome =
            tokio::time::timeout(timeout, authority.give_back_boxed(scope, sequence, tail))
                .await
                .unwrap_or_else(|_| Err(AuthorityError::store(GiveBackTimedOut(timeout))));
        match outcome {
            Ok(true) => {
                debug!(scope, sequence, %tail, "ids given back");
                given += tail.len();
            }
            Ok(false) => debug!(scope, sequence, %tail, "ids not given back: reserved after"),
            Err(error) => {
                warn!(scope, sequence, %tail, %error, "ids not given back: lost");
                first_error.get_or_insert(Error::from(error));
            }
        }
    }
    first_error.map_or(Ok(given), Err)
}

/// A give-back that got no answer in time.
#[derive(Debug, thiserror::Error)]
#[error("no answer to the give-back within {0:?}")]
struct GiveBackTimedOut(std::time::Duration);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_pending_block_goes_back_first_then_the_rest() {
        let rest = Block::new(0, 1, 10, 6).unwrap();
        let pending = Block::new(0, 1, 16, 32).unwrap();
        assert_eq!(tails(Some(rest), Some(pending)), [pending, rest]);
        let elsewhere = Block::new(0, 2, 16, 32).unwrap();
        assert_eq!(tails(Some(rest), Some(elsewhere)), [elsewhere, rest]);
        assert_eq!(tails(None, Some(pending)), [pending]);
        assert_eq!(tails(Some(rest), None), [rest]);
        assert!(tails(None, None).is_empty());
    }
}
