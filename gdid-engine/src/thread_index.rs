//! A small, dense index for each live thread: the lowest index no live thread holds, given the
//! first time a thread asks, and given back when the thread exits, for the next thread that asks.
//!
//! [`PerThread`](crate::per_thread) keeps a generator's slots in an array by this index: a
//! lookup is a thread-local read and an array access, whatever the number of generators. The
//! `thread_local` crate does the same, but panics when a thread asks for its index from a
//! thread-local destructor run after the index was given back; here that thread gets `None`,
//! and its ids come from the shared block.

use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Mutex, PoisonError};

/// [`INDEX`] before this thread asked for one.
const UNASSIGNED: usize = usize::MAX;
/// [`INDEX`] once this thread gave its index back: its thread-locals are being destroyed.
const GIVEN_BACK: usize = usize::MAX - 1;

/// The indices: those given back, lowest first, and the next never given.
struct Indices {
    free: BinaryHeap<Reverse<usize>>,
    next: usize,
}

static INDICES: Mutex<Indices> = Mutex::new(Indices {
    free: BinaryHeap::new(),
    next: 0,
});

thread_local! {
    /// This thread's index, read on every lookup: no destructor, so it is readable until the
    /// thread is gone, and a read is one load.
    static INDEX: Cell<usize> = const { Cell::new(UNASSIGNED) };
    /// Gives this thread's index back when the thread exits.
    static HOLDER: Holder = const { Holder(Cell::new(UNASSIGNED)) };
}

/// The index [`HOLDER`] gives back.
struct Holder(Cell<usize>);

impl Drop for Holder {
    fn drop(&mut self) {
        // First: from now on this thread has no index, so it never touches a slot again once
        // another thread may have taken it.
        INDEX.set(GIVEN_BACK);
        let index = self.0.get();
        if index < GIVEN_BACK {
            let mut indices = INDICES.lock().unwrap_or_else(PoisonError::into_inner);
            indices.free.push(Reverse(index));
        }
    }
}

/// This thread's index, assigned the first time; `None` once this thread's thread-locals are
/// being destroyed and its index was given back (or could not be kept).
#[inline]
pub(crate) fn current() -> Option<usize> {
    let index = INDEX.get();
    if index < GIVEN_BACK {
        Some(index)
    } else {
        assign(index)
    }
}

/// Takes the lowest free index for this thread, unless it gave its index back already.
#[cold]
fn assign(seen: usize) -> Option<usize> {
    if seen == GIVEN_BACK {
        return None;
    }
    HOLDER
        .try_with(|holder| {
            let index = {
                let mut indices = INDICES.lock().unwrap_or_else(PoisonError::into_inner);
                match indices.free.pop() {
                    Some(Reverse(index)) => index,
                    None => {
                        let index = indices.next;
                        indices.next += 1;
                        index
                    }
                }
            };
            holder.0.set(index);
            INDEX.set(index);
            index
        })
        .ok()
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::collections::HashSet;
    use std::sync::{Arc, Barrier, Mutex};

    use super::current;

    #[test]
    fn live_threads_hold_distinct_indices_and_exited_ones_give_theirs_back() {
        const THREADS: usize = 8;
        let barrier = Arc::new(Barrier::new(THREADS));
        let held: Vec<usize> = (0..THREADS)
            .map(|_| {
                let barrier = Arc::clone(&barrier);
                std::thread::spawn(move || {
                    let index = current().unwrap();
                    assert_eq!(current(), Some(index), "a thread keeps its index");
                    // All alive at once: no two may hold the same index.
                    barrier.wait();
                    index
                })
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|thread| thread.join().unwrap())
            .collect();
        let distinct: HashSet<usize> = held.iter().copied().collect();
        assert_eq!(distinct.len(), THREADS, "indices held at once: {held:?}");
        // They are back: a new thread gets one of them or a lower one (other tests' threads
        // take indices too, so not always the lowest of these).
        let next = std::thread::spawn(|| current().unwrap()).join().unwrap();
        assert!(
            next <= *held.iter().max().unwrap(),
            "{next} after {held:?} exited"
        );
    }

    thread_local! {
        static ASKS_ON_EXIT: AsksOnExit = const { AsksOnExit(Cell::new(None)) };
    }

    /// What [`AsksOnExit`] saw: the index its thread held, and what `current` gave it.
    static SEEN_ON_EXIT: Mutex<Vec<(usize, Option<usize>)>> = Mutex::new(Vec::new());

    /// Asks for the index from its destructor, registered before [`super::HOLDER`]'s (so run
    /// after it where destructors run in reverse order, as on Linux) or after it.
    struct AsksOnExit(Cell<Option<usize>>);

    impl Drop for AsksOnExit {
        fn drop(&mut self) {
            let held = self.0.get().unwrap();
            SEEN_ON_EXIT.lock().unwrap().push((held, current()));
        }
    }

    /// A call from a thread-local destructor gets the thread's own index while the thread holds
    /// it and `None` once it was given back, never a panic and never another index.
    #[test]
    fn a_call_from_a_thread_local_destructor_gets_its_own_index_or_none() {
        for register_first in [true, false] {
            std::thread::spawn(move || {
                if register_first {
                    ASKS_ON_EXIT.with(|_| ());
                }
                let index = current().unwrap();
                ASKS_ON_EXIT.with(|asks| asks.0.set(Some(index)));
            })
            .join()
            .unwrap();
        }
        let seen = SEEN_ON_EXIT.lock().unwrap().clone();
        assert_eq!(seen.len(), 2);
        for (held, got) in &seen {
            assert!(got.is_none() || *got == Some(*held), "{seen:?}");
        }
        assert!(
            seen.iter().any(|(_, got)| got.is_none()),
            "no destructor ran after the index was given back: {seen:?}"
        );
    }
}
