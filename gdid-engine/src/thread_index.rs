//! Small, dense indices for live threads: [`take`] gives the lowest index no live thread holds,
//! [`give_back`] returns one for the next thread.
//!
//! [`PerThread`](crate::per_thread) keeps a generator's slots in an array by this index, so that
//! a thread finds its slot of any generator with an array access, whatever the number of
//! generators. The thread-local that holds a thread's index, and gives it back when the thread
//! exits, is [`PerThread`](crate::per_thread)'s: the same destructor must forget the thread's
//! cached slot first.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Mutex, PoisonError};

/// The indices: those given back, lowest first, and the next never given.
struct Indices {
    free: BinaryHeap<Reverse<usize>>,
    next: usize,
}

static INDICES: Mutex<Indices> = Mutex::new(Indices {
    free: BinaryHeap::new(),
    next: 0,
});

/// The lowest index no live thread holds.
pub(crate) fn take() -> usize {
    let mut indices = INDICES.lock().unwrap_or_else(PoisonError::into_inner);
    match indices.free.pop() {
        Some(Reverse(index)) => index,
        None => {
            let index = indices.next;
            indices.next += 1;
            index
        }
    }
}

/// Gives `index` back, for the next thread to [`take`]; its holder never uses it again.
pub(crate) fn give_back(index: usize) {
    let mut indices = INDICES.lock().unwrap_or_else(PoisonError::into_inner);
    indices.free.push(Reverse(index));
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::{give_back, take};

    /// Indices held at once are distinct, and one given back is taken again before any higher.
    /// Other tests' threads take and give back too, so only what they cannot change is asserted.
    #[test]
    fn held_indices_are_distinct_and_the_lowest_free_one_comes_first() {
        let held: Vec<usize> = (0..64).map(|_| take()).collect();
        let distinct: HashSet<usize> = held.iter().copied().collect();
        assert_eq!(distinct.len(), held.len(), "indices held at once: {held:?}");
        let highest = *held.iter().max().unwrap();
        give_back(highest);
        let again = take();
        assert!(
            again <= highest,
            "{again} taken after {highest} was given back"
        );
        give_back(again);
        for index in held.into_iter().filter(|&index| index != highest) {
            give_back(index);
        }
    }
}
