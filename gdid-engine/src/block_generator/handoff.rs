//! The fast path and the hand-off between the shared block and the threads' slices.
//!
//! - A thread serves ids from its slice ([`Slot`]), which only that thread writes, found through a
//!   one-entry thread-local cache ([`PerThread`](crate::per_thread::PerThread)): a thread-local
//!   read, a compare, three plain loads and a plain store; no read-modify-write, no lock. A
//!   thread's slot outlives it: when it exits, its thread-local destructor first forgets the slot
//!   and the thread's dense index, then gives the index back; the next thread that takes it gets
//!   its slot of every generator, with the slice left in it, and serves that slice first. A call
//!   made on the exiting thread after that (from another thread-local destructor) finds no slot
//!   and is given none: it takes its id straight from the current segment. So one slot never has
//!   two writers.
//! - A slice is replaced only once it is used up, by a new one taken from the current
//!   [`Segment`] with one compare-and-swap.
//! - A block is installed as the current segment only once the current one is used up (under the
//!   state lock), so a take from the old segment, racing the installation, finds nothing.
//!
//! Tasks move between threads at every await and share their thread's slot: whoever comes to a
//! thread serves from the slice it finds there before taking a new one. So every id taken is
//! served once or is still in a slot, and [`Stats`](super::Stats) can count them.
//! `gdid-engine/loom/tests/loom_block_handoff.rs` checks these rules with the model checker.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use tokio::time::Instant;
use tracing::debug;

use super::super::authority::Block;
use super::super::config::IdOrder;
use super::super::generator_error::Error;
use super::super::per_thread::Key;
use super::super::segment::{Segment, Slot, Taken, id_of};
use super::{BlockGenerator, Inner, State};
use gdid_core::Gdid;

/// The future of [`BlockGenerator::next_id`](super::BlockGenerator::next_id): at the first poll,
/// an id from what is in hand ([`Inner::try_next_id`], inlined into the caller); only when there
/// is none, the wait for a block, boxed. An `async fn` kept the wait's state inline: a future of
/// hundreds of bytes, whose poll the compiler did not inline, and whose 80-byte output was copied
/// for every id.
///
/// It holds the handle, not its two fields: a future of 24 bytes, written into the caller's
/// state for every id.
pub(super) struct NextId<'a> {
    generator: &'a BlockGenerator,
    slow: Option<SlowNextId<'a>>,
}

type SlowNextId<'a> = Pin<Box<dyn Future<Output = Result<Gdid, Error>> + Send + 'a>>;

impl<'a> NextId<'a> {
    #[inline]
    pub(super) fn new(generator: &'a BlockGenerator) -> Self {
        NextId {
            generator,
            slow: None,
        }
    }
}

impl Future for NextId<'_> {
    type Output = Result<Gdid, Error>;

    #[inline]
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = &mut *self;
        let slow = match &mut this.slow {
            Some(slow) => slow,
            // Built where it goes, as the 4 and 8 bytes in which a `Result<Gdid, Error>` is
            // copied (`id_of` in segment.rs): an id built as 8 and 4, then read as 4 and 8,
            // stalls the load of its last 8 bytes (measured: 8.5 against 4.4 ns per id).
            None => {
                let generator = this.generator;
                match generator.inner.try_next_raw(generator.key) {
                    Some((era, id64)) => return Poll::Ready(Ok(Gdid::from_raw(era, id64))),
                    None => this.slow.insert(slow_next_id(&generator.inner)),
                }
            }
        };
        slow.as_mut().poll(cx)
    }
}

/// The wait for a block of [`NextId`].
#[cold]
fn slow_next_id(inner: &Arc<Inner>) -> SlowNextId<'_> {
    Box::pin(inner.next_id_slow())
}

impl Inner {
    /// One id from what is in hand, without waiting: this thread's slice, refilled from the
    /// current segment when it is used up (per-thread order), or the shared cursor (strict
    /// order). `None` when the current segment is used up.
    ///
    /// The fast path is this thread's slot, found in the one-entry thread-local cache (a strict
    /// generator has no slots: it never finds one there).
    pub(super) fn try_next_id(self: &Arc<Self>) -> Option<Gdid> {
        self.try_next_id_keyed(self.slots.key())
    }

    /// [`try_next_id`](Self::try_next_id) with the slots' key the handle carries: the fast
    /// path reads no line of `self` (see `PerThread`).
    #[inline]
    pub(super) fn try_next_id_keyed(self: &Arc<Self>, key: Key) -> Option<Gdid> {
        self.try_next_raw(key).map(|(era, id64)| id_of(era, id64))
    }

    /// [`try_next_id`](Self::try_next_id), as the id's era and `id64`, for the caller to build
    /// the id where it puts it (`id_of` for an `Option<Gdid>`, `Gdid::from_raw` in a
    /// [`NextId`]'s `Result<Gdid, Error>`: see `id_of`).
    #[inline]
    fn try_next_raw(self: &Arc<Self>, key: Key) -> Option<(u32, u64)> {
        match self.slots.hot(key).and_then(|slot| slot.take_raw()) {
            Some(raw) => Some(raw),
            None => self.try_next_raw_cold(key),
        }
    }

    /// [`try_next_raw`](Self::try_next_raw) when this thread's slot is not in the cache or is
    /// used up.
    ///
    /// The slot is looked up in the thread's row (the cache held another generator's, or this
    /// one's, used up), before the order is read: a strict generator has no slots, it never
    /// finds one there. So a thread serving many generators in turn reads its slot of each
    /// and no line of the generator until the slice is used up.
    #[inline(never)]
    fn try_next_raw_cold(self: &Arc<Self>, key: Key) -> Option<(u32, u64)> {
        match self.slots.find(key).and_then(|slot| slot.take_raw()) {
            Some(raw) => Some(raw),
            None => self.try_next_raw_refill(),
        }
    }

    /// [`try_next_raw`](Self::try_next_raw) when this thread's slice is used up (or it has
    /// none): a new slice, or an id from the shared cursor (strict order).
    #[cold]
    #[inline(never)]
    fn try_next_raw_refill(self: &Arc<Self>) -> Option<(u32, u64)> {
        match self.config.order {
            IdOrder::PerThread => self.refill_slice(),
            IdOrder::Strict => self.take_up_to(1).map(|taken| taken.first_raw()),
        }
    }

    /// Gives this thread a new slice, whose first id it returns (era and `id64`). Called once
    /// this thread's slice is used up, or when `PerThread::get` found none for it, with no await
    /// since: only this thread writes its slot.
    ///
    /// A thread that had no slot may be given one with ids left: the slots of a thread that
    /// exited go to the next thread that takes its index. The slice the exited thread left is
    /// served first; replacing it would lose its ids. A thread whose thread-locals are being
    /// destroyed gets no slot: its id comes straight from the current segment.
    #[cold]
    fn refill_slice(self: &Arc<Self>) -> Option<(u32, u64)> {
        let Some(slot) = self.slots.try_get_or(Slot::default) else {
            return self.take_up_to(1).map(|taken| taken.first_raw());
        };
        if let Some(raw) = slot.take_raw() {
            return Some(raw);
        }
        let taken = self.take_up_to(self.current.load().slice)?;
        slot.fill(&taken);
        Some(slot.take_raw().unwrap_or_else(|| taken.first_raw()))
    }

    /// Takes up to `want` ids from the current segment, starting a prefetch when the take
    /// passes the low-water mark.
    pub(super) fn take_up_to(self: &Arc<Self>, want: u64) -> Option<Taken> {
        let segment = self.current.load();
        let taken = segment.take_up_to(want)?;
        self.runway.taken(taken.len());
        if segment.crossed_low_water(&taken) {
            self.start_prefetch();
        }
        Some(taken)
    }

    /// Whether the current segment has ids, after installing the pending block if the current
    /// one is used up. The caller holds the state lock.
    pub(super) fn ready_or_install_pending(&self, st: &mut State) -> bool {
        if !self.current.load().is_used_up() {
            return true;
        }
        match st.pending.take() {
            Some(block) => {
                self.install(block, st);
                true
            }
            None => false,
        }
    }

    /// Makes `block` the current segment. The caller holds the state lock and has checked that
    /// the current segment is used up.
    pub(super) fn install(&self, block: Block, st: &mut State) {
        let old = self
            .current
            .swap(Arc::new(Segment::new(block, &self.config)));
        st.consumed_before_current += old.taken();
        // The rate is measured while there are ids to take: from now.
        st.rate.restart(Instant::now(), st.consumed_before_current);
        debug!(scope = %self.scope, sequence = %self.sequence, %block, "block installed");
    }
}

/// The synchronous steps of the hand-off, for the model checker only
/// (`gdid-engine/loom/tests/loom_block_handoff.rs`, built with `RUSTFLAGS="--cfg gdid_loom"`): the async
/// API around them needs a tokio runtime, which loom cannot run.
#[cfg(gdid_loom)]
impl super::BlockGenerator {
    /// What `next_id` does before waiting for a block, and again after each wait.
    #[doc(hidden)]
    pub fn loom_try_next_id(&self) -> Option<Gdid> {
        self.inner.try_next_id()
    }

    /// What the allocation task does with the block it got.
    #[doc(hidden)]
    pub fn loom_deliver(&self, block: Block) {
        self.inner.finish_round(Ok(block));
    }

    /// What the thread-local destructor does when the calling thread exits: its slot, with the
    /// slice left in it, goes to the next thread that needs one.
    #[doc(hidden)]
    pub fn loom_thread_exit(&self) {
        self.inner.slots.release();
    }

    /// What a caller waiting for a block does first: whether ids are in hand again, installing
    /// the pending block if the current one is used up.
    #[doc(hidden)]
    pub fn loom_ready(&self) -> bool {
        self.inner
            .ready_or_install_pending(&mut self.inner.lock_state())
    }
}
