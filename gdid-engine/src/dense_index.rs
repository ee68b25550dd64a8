//! Small, dense indices: [`DenseIndices::take`] gives the lowest index nobody holds,
//! [`DenseIndices::give_back`] returns one for the next taker.
//!
//! [`PerThread`](crate::per_thread) numbers live threads and generators this way: each thread
//! has a row of slots, indexed by generator number, so that a thread finds its slot of any
//! generator with an array access into memory of its own, whatever the number of generators.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::sync::{Mutex, PoisonError};

/// A set of indices: those given back, lowest first, and the next never given.
pub(crate) struct DenseIndices(Mutex<Indices>);

struct Indices {
    free: BinaryHeap<Reverse<usize>>,
    next: usize,
}

impl DenseIndices {
    pub(crate) const fn new() -> Self {
        DenseIndices(Mutex::new(Indices {
            free: BinaryHeap::new(),
            next: 0,
        }))
    }

    /// The lowest index nobody holds.
    pub(crate) fn take(&self) -> usize {
        let mut indices = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match indices.free.pop() {
            Some(Reverse(index)) => index,
            None => {
                let index = indices.next;
                indices.next += 1;
                index
            }
        }
    }

    /// Gives `index` back, for the next [`take`](Self::take); its holder never uses it again.
    pub(crate) fn give_back(&self, index: usize) {
        let mut indices = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        indices.free.push(Reverse(index));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::DenseIndices;

    /// Indices held at once are distinct, and one given back is taken again before any higher.
    #[test]
    fn held_indices_are_distinct_and_the_lowest_free_one_comes_first() {
        let indices = DenseIndices::new();
        let held: Vec<usize> = (0..64).map(|_| indices.take()).collect();
        let distinct: HashSet<usize> = held.iter().copied().collect();
        assert_eq!(distinct.len(), held.len(), "indices held at once: {held:?}");
        assert_eq!(indices.take(), 64, "nothing was given back yet");
        indices.give_back(40);
        indices.give_back(7);
        assert_eq!(indices.take(), 7);
        assert_eq!(indices.take(), 40);
        assert_eq!(indices.take(), 65);
    }
}
