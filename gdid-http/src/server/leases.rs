//! Leases: the latest block this server sent for each sequence, and the secret its client shows
//! to give the block's unused tail back. Without one, any holder of a token for the scope could
//! "give back" the tail of a block another client is serving from, and the server would issue
//! those ids twice.

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};

use gdid_core::generator::Block;
use ring::rand::{SecureRandom, SystemRandom};

/// The latest block sent per sequence, with its lease; at most `max` sequences (one more evicts
/// another's lease: that client's tail is then lost, never issued twice).
pub(crate) struct Leases {
    max: usize,
    random: SystemRandom,
    latest: Mutex<HashMap<(String, String), (Block, String)>>,
}

impl Leases {
    pub(crate) fn new(max: usize) -> Self {
        Leases {
            max: max.max(1),
            random: SystemRandom::new(),
            latest: Mutex::default(),
        }
    }

    /// A new lease for `block`, sent for (`scope`, `sequence`): the previous one of the sequence
    /// is void from now on. `None` when the system's random source fails (the block is sent
    /// without a lease, and its tail cannot be given back).
    pub(crate) fn grant(&self, scope: &str, sequence: &str, block: Block) -> Option<String> {
        let mut bytes = [0; 16];
        self.random.fill(&mut bytes).ok()?;
        let lease = hex::encode(bytes);
        let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (scope.to_owned(), sequence.to_owned());
        if latest.len() >= self.max && !latest.contains_key(&key) {
            let evicted = latest.keys().next().cloned();
            if let Some(evicted) = evicted {
                latest.remove(&evicted);
            }
        }
        latest.insert(key, (block, lease.clone()));
        Some(lease)
    }

    /// Whether `tail` may go back: `lease` is the latest of the sequence and `tail` is the end of
    /// its block. The lease is spent either way it matches.
    pub(crate) fn redeem(&self, scope: &str, sequence: &str, lease: &str, tail: &Block) -> bool {
        let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        let key = (scope.to_owned(), sequence.to_owned());
        let Some((block, granted)) = latest.get(&key) else {
            return false;
        };
        if granted != lease {
            return false;
        }
        let within = tail.era() == block.era()
            && tail.authority() == block.authority()
            && tail.start() >= block.start()
            && tail.end() == block.end();
        latest.remove(&key);
        within
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_latest_lease_of_a_sequence_gives_back_the_end_of_its_block() {
        let leases = Leases::new(10);
        let first = Block::new(0, 1, 1, 100).unwrap();
        let second = Block::new(0, 1, 101, 100).unwrap();
        let old = leases.grant("s", "q", first).unwrap();
        let new = leases.grant("s", "q", second).unwrap();
        assert_ne!(old, new);
        assert!(!leases.redeem("s", "q", &old, &Block::new(0, 1, 50, 51).unwrap()));
        // Not the end of the block, or another sequence: refused (and the lease is spent).
        assert!(!leases.redeem("s", "other", &new, &Block::new(0, 1, 150, 51).unwrap()));
        assert!(!leases.redeem("s", "q", &new, &Block::new(0, 1, 150, 10).unwrap()));
        assert!(!leases.redeem("s", "q", &new, &Block::new(0, 1, 150, 51).unwrap()));
        let third = leases
            .grant("s", "q", Block::new(0, 1, 201, 100).unwrap())
            .unwrap();
        assert!(leases.redeem("s", "q", &third, &Block::new(0, 1, 250, 51).unwrap()));
        // Once only.
        assert!(!leases.redeem("s", "q", &third, &Block::new(0, 1, 250, 51).unwrap()));
    }

    #[test]
    fn a_full_table_evicts_a_lease_and_never_grows() {
        let leases = Leases::new(2);
        for k in 0..5 {
            leases.grant("s", &format!("q{k}"), Block::new(0, 1, 1, 10).unwrap());
        }
        assert_eq!(leases.latest.lock().unwrap().len(), 2);
    }
}
