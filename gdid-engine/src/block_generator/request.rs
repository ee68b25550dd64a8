//! One request for a block, run as a task of its own under the allocation timeout: a round that
//! moves on without it (another authority answered first, or the round was given up) leaves its
//! answer to the task, which makes the generator its one owner: a late block is checked against
//! the floor recorded when it was asked for, then kept to serve next, or given back, or (when
//! neither can be) dropped and counted as wasted. A block is never served twice.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll};

use tokio::sync::oneshot;
use tokio::time::Instant;
use tracing::{debug, warn};

use super::super::authority::Block;
use super::super::generator_error::FailureCause;
use super::Inner;

/// What a request came back with.
pub(super) type Outcome = Result<Block, FailureCause>;

/// A request sent in a round: which authority, what it was asked, and where its answer comes.
pub(super) struct Request {
    /// The authority's index.
    pub(super) i: usize,
    /// When it was sent.
    pub(super) asked: Instant,
    /// Where the authority's blocks ended when it was sent: its block must not start before.
    pub(super) floor: Option<(u32, u64)>,
    /// Whether the authority had failed before this request (its latency starts afresh).
    pub(super) recovering: bool,
    size: u64,
    answer: oneshot::Receiver<Outcome>,
    generator: Weak<Inner>,
}

impl Inner {
    /// Sends a request for a block of `size` to authority `i`, in a task of its own.
    pub(super) fn ask(self: &Arc<Self>, i: usize, size: u64) -> Request {
        let asked = Instant::now();
        let (floor, recovering) = {
            let mut st = self.lock_state();
            let health = &mut st.health[i];
            health.last_asked = Some(asked);
            health.requests_out += 1;
            (health.next_expected, health.consecutive_failures > 0)
        };
        let (reply, answer) = oneshot::channel();
        let authority = self.authorities[i].clone();
        let generator = Arc::downgrade(self);
        let (scope, sequence) = (self.scope.clone(), self.sequence.clone());
        let timeout = self.config.allocation_timeout;
        let task = async move {
            let outcome = match tokio::time::timeout(
                timeout,
                authority.allocate_boxed(&scope, &sequence, size),
            )
            .await
            {
                Ok(Ok(block)) => Ok(block),
                Ok(Err(error)) => Err(FailureCause::Error(Arc::new(error))),
                Err(_) => Err(FailureCause::TimedOut(timeout)),
            };
            let Some(inner) = generator.upgrade() else {
                if let Ok(block) = outcome {
                    // Nobody is left to serve it: back to where it came from, if it can go.
                    let _ = authority.give_back_boxed(&scope, &sequence, block).await;
                }
                return;
            };
            inner.lock_state().health[i].requests_out -= 1;
            if let Err(outcome) = reply.send(outcome) {
                inner.late_answer(i, asked, floor, size, outcome);
            }
        };
        tokio::spawn(task);
        Request {
            i,
            asked,
            floor,
            recovering,
            size,
            answer,
            generator: Arc::downgrade(self),
        }
    }

    /// An answer that came after its round moved on: an authority's block is served (callers
    /// wait), or kept to serve next when nothing is kept or being fetched, else given back; a
    /// failure counts against the authority.
    fn late_answer(
        self: &Arc<Self>,
        i: usize,
        asked: Instant,
        floor: Option<(u32, u64)>,
        size: u64,
        outcome: Outcome,
    ) {
        let took = asked.elapsed();
        let block = match outcome.and_then(|block| self.accept(i, block, size, floor)) {
            Ok(block) => block,
            Err(cause) => {
                self.runway.allocation(i, took, false);
                self.record_failure(i, &cause);
                return;
            }
        };
        self.runway.allocation(i, took, true);
        self.measured(i, took, false);
        // Served at once when callers wait for a block; kept to serve next when no other block is
        // kept and none is being fetched (whose block would then have nowhere to go); else
        // given back.
        let mut st = self.lock_state();
        let used_up = self.current.load().is_used_up();
        if st.closed || st.pending.is_some() || (st.in_flight && !used_up) {
            drop(st);
            debug!(%block, "a late block is given back: another is kept or on its way");
            self.give_back_late(i, block);
            return;
        }
        if used_up {
            self.install(block, &mut st);
        } else {
            st.pending = Some(block);
        }
        drop(st);
        debug!(%block, "a late block is kept to serve next");
        self.changed.notify_waiters();
    }

    /// Gives a late block back to its authority, in a task; counted as wasted if it cannot go.
    fn give_back_late(self: &Arc<Self>, i: usize, block: Block) {
        let inner = Arc::clone(self);
        tokio::spawn(async move {
            let authority = &inner.authorities[i];
            let back = tokio::time::timeout(
                inner.config.allocation_timeout,
                authority.give_back_boxed(&inner.scope, &inner.sequence, block),
            )
            .await;
            if !matches!(back, Ok(Ok(true))) {
                warn!(%block, "a late block could not be given back: its ids are not used");
                inner.lock_state().hedged_ids_wasted += block.len();
                inner.runway.wasted(block.len());
            }
        });
    }
}

impl Future for Request {
    type Output = Outcome;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Outcome> {
        Pin::new(&mut self.answer).poll(cx).map(|answer| {
            // The task always answers, or hands its answer to the generator when nobody listens.
            answer.unwrap_or(Err(FailureCause::TimedOut(std::time::Duration::ZERO)))
        })
    }
}

impl Drop for Request {
    /// A request its round no longer waits for: an answer already sent is handled as late;
    /// one not yet sent will be by its task (the channel is closed first, so it cannot be lost
    /// in between).
    fn drop(&mut self) {
        self.answer.close();
        if let Ok(outcome) = self.answer.try_recv()
            && let Some(inner) = self.generator.upgrade()
        {
            inner.late_answer(self.i, self.asked, self.floor, self.size, outcome);
        }
    }
}
