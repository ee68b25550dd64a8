//! Leases: the latest blocks this server sent for each sequence, who they were sent to, and the
//! secret each client shows to give its block's unused tail back. Without them, any holder of a
//! token for the scope could "give back" the tail of a block another client is serving from, and
//! the server would issue those ids twice.
//!
//! What a lease cannot guard against is its own holder giving back ids it already handed out:
//! that is why a server takes tails back only when started with `--give-back`, from clients it
//! trusts as it trusts its own code.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};

use gdid_engine::Block;
use ring::digest::{SHA256, digest};
use ring::rand::{SecureRandom, SystemRandom};

use super::tokens::Digest;

/// Leases kept per sequence: the current block of a generator and the one it prefetched.
const PER_SEQUENCE: usize = 2;

/// The latest blocks sent per sequence, with the digest of each one's lease and of the token it
/// was sent to; at most `max` sequences (one more evicts another's leases: that client's tail is
/// then lost, never issued twice).
pub(crate) struct Leases {
    max: usize,
    random: SystemRandom,
    latest: Mutex<HashMap<(String, String), VecDeque<Grant>>>,
}

struct Grant {
    block: Block,
    lease: Digest,
    token: Digest,
}

impl Leases {
    pub(crate) fn new(max: usize) -> Self {
        Leases {
            max: max.max(1),
            random: SystemRandom::new(),
            latest: Mutex::default(),
        }
    }

    /// A new lease for `block`, sent for (`scope`, `sequence`) to the caller of `token`. `None`
    /// when the system's random source fails (the block is sent without a lease, and its tail
    /// cannot be given back).
    pub(crate) fn grant(
        &self,
        scope: &str,
        sequence: &str,
        block: Block,
        token: Digest,
    ) -> Option<String> {
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
        let grants = latest.entry(key).or_default();
        if grants.len() == PER_SEQUENCE {
            grants.pop_front();
        }
        grants.push_back(Grant {
            block,
            lease: hash(&lease),
            token,
        });
        Some(lease)
    }

    /// Whether `tail` may go back: `lease` is one of the sequence's latest, granted to the
    /// caller of `token`, and `tail` is the end of its block. A lease that matches is spent.
    pub(crate) fn redeem(
        &self,
        scope: &str,
        sequence: &str,
        lease: &str,
        tail: &Block,
        token: Digest,
    ) -> bool {
        let presented = hash(lease);
        let mut latest = self.latest.lock().unwrap_or_else(PoisonError::into_inner);
        let Some(grants) = latest.get_mut(&(scope.to_owned(), sequence.to_owned())) else {
            return false;
        };
        // Digests compared, not leases: a comparison's time says nothing of the secret.
        let Some(at) = grants
            .iter()
            .position(|grant| grant.lease == presented && grant.token == token)
        else {
            return false;
        };
        let block = grants.remove(at).map(|grant| grant.block);
        block.is_some_and(|block| {
            tail.era() == block.era()
                && tail.authority() == block.authority()
                && tail.start() >= block.start()
                && tail.end() == block.end()
        })
    }
}

fn hash(lease: &str) -> Digest {
    let mut out = [0; 32];
    out.copy_from_slice(digest(&SHA256, lease.as_bytes()).as_ref());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME: Digest = [1; 32];
    const OTHER: Digest = [2; 32];

    fn tail(start: u64, len: u64) -> Block {
        Block::new(0, 1, start, len).unwrap()
    }

    #[test]
    fn a_lease_gives_back_the_end_of_its_block_once_and_only_for_its_caller() {
        let leases = Leases::new(10);
        let lease = leases.grant("s", "q", tail(1, 100), ME).unwrap();
        assert_eq!(lease.len(), 32);
        // Another caller with the lease, another sequence, a guess: refused, lease kept.
        assert!(!leases.redeem("s", "q", &lease, &tail(50, 51), OTHER));
        assert!(!leases.redeem("s", "other", &lease, &tail(50, 51), ME));
        assert!(!leases.redeem("s", "q", &"0".repeat(32), &tail(50, 51), ME));
        assert!(leases.redeem("s", "q", &lease, &tail(50, 51), ME));
        // Once.
        assert!(!leases.redeem("s", "q", &lease, &tail(50, 51), ME));
        // Not the end of its block: refused, and the lease is spent.
        let lease = leases.grant("s", "q", tail(101, 100), ME).unwrap();
        assert!(!leases.redeem("s", "q", &lease, &tail(150, 10), ME));
        assert!(!leases.redeem("s", "q", &lease, &tail(150, 51), ME));
    }

    #[test]
    fn the_current_block_and_the_prefetched_one_both_go_back() {
        let leases = Leases::new(10);
        let current = leases.grant("s", "q", tail(1, 100), ME).unwrap();
        let pending = leases.grant("s", "q", tail(101, 100), ME).unwrap();
        // The latest first, as a closing generator gives them back.
        assert!(leases.redeem("s", "q", &pending, &tail(101, 100), ME));
        assert!(leases.redeem("s", "q", &current, &tail(40, 61), ME));
        // A third grant pushes the first out.
        let first = leases.grant("s", "q", tail(201, 10), ME).unwrap();
        leases.grant("s", "q", tail(211, 10), ME).unwrap();
        leases.grant("s", "q", tail(221, 10), ME).unwrap();
        assert!(!leases.redeem("s", "q", &first, &tail(201, 10), ME));
    }

    #[test]
    fn a_full_table_evicts_a_sequence_and_never_grows() {
        let leases = Leases::new(2);
        for k in 0..5 {
            leases.grant("s", &format!("q{k}"), tail(1, 10), ME);
        }
        assert_eq!(leases.latest.lock().unwrap().len(), 2);
    }
}
