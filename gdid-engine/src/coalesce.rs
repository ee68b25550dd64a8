//! Group commit: the allocations waiting for one sequence at one authority, reserved together by
//! one write and split among their callers ([`Coalescing`]).

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::oneshot;

use crate::authority::{Authority, BLOCK_SIZE_MAX, Block, DynAuthority};
use crate::error::AuthorityError;

/// An authority whose concurrent allocations of one (scope, sequence) share one write.
///
/// When many callers reserve blocks of one sequence at once (64 clients of `gdid serve` asking
/// for blocks, 64 tasks each with a generator), each reservation is a transaction of its own, and
/// on a store that commits one writer at a time (SQLite) every caller waits in the store's busy
/// handler behind the others. Here, one caller at a time writes: it takes every allocation of the
/// sequence waiting by then, reserves their sum with **one** call to the inner authority, and
/// splits the block, in the order the callers came, into consecutive blocks of the sizes they
/// asked for. The callers that came meanwhile are served by the next write, and so on.
///
/// Nothing the inner authority keeps is bypassed: the one write is its ordinary
/// [`allocate`](Authority::allocate), with its validation, era rule and failover fence, and a
/// [`give_back`](Authority::give_back) passes through as it is: only the last block of a split
/// ends where the stored counter stands, so only its tail can go back (the conditional write of
/// [`CounterState::give_back`](crate::CounterState::give_back) refuses the others).
///
/// When the shared write fails, its callers each try again alone, so that each gets the answer
/// of its own request (an error is not shared). A caller that gives up while its block is being
/// reserved loses that block's ids (a gap, never a repeat); the others are served.
///
/// ```
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), gdid_engine::AuthorityError> {
/// use std::sync::Arc;
///
/// use gdid_engine::{Authority, Coalescing, MemoryAuthority};
///
/// let authority = Coalescing::new(Arc::new(MemoryAuthority::new(1)));
/// let (a, b) = tokio::join!(
///     authority.allocate("shop", "orders", 100),
///     authority.allocate("shop", "orders", 10),
/// );
/// let (a, b) = (a?, b?);
/// assert_eq!((a.len(), b.len()), (100, 10));
/// assert!(a.end() <= b.start() || b.end() <= a.start(), "{a} and {b} overlap");
/// # Ok(())
/// # }
/// ```
pub struct Coalescing {
    inner: Arc<dyn DynAuthority>,
    queues: Mutex<HashMap<(String, String), Arc<Queue>>>,
}

/// The allocations waiting for one sequence, and the turn to write them.
#[derive(Default)]
struct Queue {
    waiting: Mutex<Vec<Waiter>>,
    turn: tokio::sync::Mutex<()>,
}

/// One caller's allocation: its size and where its answer goes.
struct Waiter {
    size: u64,
    reply: oneshot::Sender<Answer>,
}

/// What a caller is told once the write that took its allocation is done.
enum Answer {
    /// Its share of the block, or the error of a write that held its allocation alone.
    Served(Result<Block, AuthorityError>),
    /// The shared write failed: ask the inner authority alone.
    Alone,
}

impl Coalescing {
    /// `inner`, with its concurrent allocations of one sequence coalesced.
    pub fn new(inner: Arc<dyn DynAuthority>) -> Coalescing {
        Coalescing {
            inner,
            queues: Mutex::default(),
        }
    }

    /// The queue of (scope, sequence), made when none is waiting, held until the caller is done.
    fn queue(&self, scope: &str, sequence: &str) -> HeldQueue<'_> {
        let key = (scope.to_owned(), sequence.to_owned());
        let queue = Arc::clone(lock(&self.queues).entry(key.clone()).or_default());
        HeldQueue {
            queues: &self.queues,
            key,
            queue,
        }
    }

    /// Waits for `queue`'s answer to an allocation of `size`, taking the turn to write when it
    /// comes first.
    async fn wait(&self, queue: &Queue, scope: &str, sequence: &str, size: u64) -> Answer {
        loop {
            let (reply, mut answer) = oneshot::channel();
            lock(&queue.waiting).push(Waiter { size, reply });
            loop {
                tokio::select! {
                    biased;
                    answered = &mut answer => match answered {
                        Ok(answer) => return answer,
                        // The caller whose write took it gave up before answering: ask again.
                        Err(_) => break,
                    },
                    turn = queue.turn.lock() => {
                        self.write(queue, scope, sequence).await;
                        drop(turn);
                    }
                }
            }
        }
    }

    /// One write: reserves the sum of the allocations waiting (as many as fit in one block) and
    /// answers each with its share.
    async fn write(&self, queue: &Queue, scope: &str, sequence: &str) {
        let mut batch = take_batch(&mut lock(&queue.waiting));
        if batch.is_empty() {
            return;
        }
        let total = batch.iter().map(|waiter| waiter.size).sum();
        let reserved = self.inner.allocate_boxed(scope, sequence, total).await;
        match reserved {
            Ok(block) => {
                let mut start = block.start();
                for waiter in batch {
                    let share = Block::new(block.era(), block.authority(), start, waiter.size);
                    start += waiter.size;
                    // A caller that gave up loses its share: a gap, never a repeat.
                    let _ = waiter.reply.send(Answer::Served(share));
                }
            }
            Err(error) if batch.len() == 1 => {
                if let Some(waiter) = batch.pop() {
                    let _ = waiter.reply.send(Answer::Served(Err(error)));
                }
            }
            Err(_) => {
                for waiter in batch {
                    let _ = waiter.reply.send(Answer::Alone);
                }
            }
        }
    }
}

/// The allocations to write together: the oldest first, as many as one block holds
/// ([`BLOCK_SIZE_MAX`] counters); the others wait for the next write.
fn take_batch(waiting: &mut Vec<Waiter>) -> Vec<Waiter> {
    let mut total = 0u64;
    let fits = waiting
        .iter()
        .take_while(|waiter| {
            total = total.saturating_add(waiter.size);
            total <= BLOCK_SIZE_MAX
        })
        .count();
    waiting.drain(..fits).collect()
}

/// A caller's hold on the queue of its sequence: when the last caller lets go, the queue leaves
/// the map, so that the map holds only the sequences being allocated (even when callers give up).
struct HeldQueue<'a> {
    queues: &'a Mutex<HashMap<(String, String), Arc<Queue>>>,
    key: (String, String),
    queue: Arc<Queue>,
}

impl Drop for HeldQueue<'_> {
    fn drop(&mut self) {
        let mut queues = lock(self.queues);
        // The map's reference and this one: nobody else holds it, and nobody can take it while
        // the map is locked.
        if Arc::strong_count(&self.queue) == 2 {
            queues.remove(&self.key);
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Authority for Coalescing {
    fn number(&self) -> u8 {
        self.inner.number()
    }

    fn label(&self) -> String {
        self.inner.label()
    }

    async fn allocate(
        &self,
        scope: &str,
        sequence: &str,
        size: u64,
    ) -> Result<Block, AuthorityError> {
        if Block::check_size(size).is_err() {
            return self.inner.allocate_boxed(scope, sequence, size).await;
        }
        let held = self.queue(scope, sequence);
        let answer = self.wait(&held.queue, scope, sequence, size).await;
        drop(held);
        match answer {
            Answer::Served(block) => block,
            Answer::Alone => self.inner.allocate_boxed(scope, sequence, size).await,
        }
    }

    async fn give_back(
        &self,
        scope: &str,
        sequence: &str,
        tail: Block,
    ) -> Result<bool, AuthorityError> {
        self.inner.give_back_boxed(scope, sequence, tail).await
    }
}

impl fmt::Debug for Coalescing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Coalescing")
            .field("inner", &self.inner)
            .field("sequences_waiting", &lock(&self.queues).len())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::faults::{FaultyAuthority, Latency};
    use crate::memory::MemoryAuthority;

    type Faulty = FaultyAuthority<MemoryAuthority>;

    /// An authority that takes 20 ms a write, and the same coalesced.
    fn slow() -> (Arc<Faulty>, Arc<Coalescing>) {
        let inner = Arc::new(
            FaultyAuthority::new(MemoryAuthority::new(3))
                .latency(Latency::Fixed(Duration::from_millis(20))),
        );
        (Arc::clone(&inner), Arc::new(Coalescing::new(inner)))
    }

    /// `count` concurrent allocations of sizes 1, 2, 3…, each on a task of its own.
    async fn allocate_at_once(
        authority: &Arc<Coalescing>,
        count: u64,
    ) -> Vec<Result<Block, AuthorityError>> {
        let tasks: Vec<_> = (1..=count)
            .map(|size| {
                let authority = Arc::clone(authority);
                tokio::spawn(async move { authority.allocate("shop", "orders", size).await })
            })
            .collect();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.unwrap());
        }
        answers
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_allocations_share_writes_and_get_disjoint_blocks_of_their_size() {
        let (inner, authority) = slow();
        let blocks: Vec<Block> = allocate_at_once(&authority, 64)
            .await
            .into_iter()
            .map(Result::unwrap)
            .collect();
        for (size, block) in (1..).zip(&blocks) {
            assert_eq!((block.len(), block.authority(), block.era()), (size, 3, 0));
        }
        let mut sorted = blocks.clone();
        sorted.sort_by_key(Block::start);
        for pair in sorted.windows(2) {
            assert!(
                pair[0].end() <= pair[1].start(),
                "{} and {} overlap",
                pair[0],
                pair[1]
            );
        }
        let writes = inner.attempts();
        assert!(writes < 64 / 4, "{writes} writes for 64 allocations");
        // Every counter reserved went to a caller: the blocks are consecutive.
        assert_eq!(
            sorted.last().unwrap().end() - sorted[0].start(),
            64 * 65 / 2
        );
        assert_eq!(
            lock(&authority.queues).len(),
            0,
            "no queue is kept once idle"
        );
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_failed_shared_write_is_tried_again_by_each_caller_alone() {
        let (inner, authority) = slow();
        inner.set_down(true);
        let answers = allocate_at_once(&authority, 8).await;
        assert!(answers.iter().all(Result::is_err), "{answers:?}");
        let attempts = inner.attempts();
        assert!(
            attempts >= 8,
            "each caller had its own answer: {attempts} attempts"
        );
        inner.set_down(false);
        assert!(
            allocate_at_once(&authority, 8)
                .await
                .iter()
                .all(Result::is_ok)
        );
    }

    /// A caller whose write hangs gives up (a timeout): the allocations its write held are asked
    /// for again, and served by the next write.
    #[tokio::test(start_paused = true)]
    async fn the_callers_of_a_write_given_up_are_served_by_the_next() {
        let (inner, authority) = slow();
        let spawn = |size| {
            let authority = Arc::clone(&authority);
            tokio::spawn(async move { authority.allocate("shop", "orders", size).await })
        };
        let pause = || tokio::time::sleep(Duration::from_millis(50));
        inner.set_hang(true);
        let first = spawn(5); // takes the turn, and hangs in its write of 5
        pause().await;
        let second = spawn(7); // waits for the turn
        pause().await;
        let third = spawn(9); // waits behind the second
        pause().await;
        first.abort();
        pause().await; // the second writes 7 + 9, and hangs
        inner.set_hang(false);
        second.abort();
        let served = tokio::time::timeout(Duration::from_secs(5), third)
            .await
            .expect("the third caller is served once the writes holding it are given up")
            .unwrap()
            .unwrap();
        assert_eq!(served.len(), 9);
        assert_eq!(inner.attempts(), 3, "5, 7 + 9, then 9");
        assert!(first.await.unwrap_err().is_cancelled());
    }

    #[tokio::test]
    async fn a_size_no_block_takes_is_refused_alone() {
        let (inner, authority) = slow();
        let refused = authority.allocate("shop", "orders", 0).await;
        assert!(
            matches!(refused, Err(AuthorityError::InvalidSize(0))),
            "{refused:?}"
        );
        let refused = authority
            .allocate("shop", "orders", BLOCK_SIZE_MAX + 1)
            .await;
        assert!(
            matches!(refused, Err(AuthorityError::InvalidSize(_))),
            "{refused:?}"
        );
        assert_eq!(inner.attempts(), 2, "each asked alone");
        assert!(lock(&authority.queues).is_empty(), "without a queue");
    }

    #[test]
    fn a_batch_holds_at_most_one_block_of_counters() {
        let waiter = |size| Waiter {
            size,
            reply: oneshot::channel().0,
        };
        let mut waiting = vec![waiter(BLOCK_SIZE_MAX - 1), waiter(1), waiter(1), waiter(5)];
        assert_eq!(take_batch(&mut waiting).len(), 2);
        assert_eq!(take_batch(&mut waiting).len(), 2);
        assert!(take_batch(&mut waiting).is_empty());
    }
}
