//! What the SQL and ORM tests of gdid-core share.

use std::collections::BTreeSet;

use gdid_core::{COUNTER_MAX, Gdid};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// `count` distinct ids (at least 3): zero, the largest, an id64 of all ones, and ids with ties
/// in the leading fields and counters near both ends; in a scrambled order, so that the
/// database does the sorting.
pub(crate) fn scrambled_ids(seed: u64, count: usize) -> Vec<Gdid> {
    let mut rng = StdRng::seed_from_u64(seed);
    let mut ids = BTreeSet::new();
    ids.extend([Gdid::ZERO, Gdid::MAX, Gdid::from_raw(0, u64::MAX)]);
    while ids.len() < count {
        let era = match rng.random_range(0..4) {
            0 => 0,
            1 => rng.random_range(0..3),
            2 => u32::MAX - rng.random_range(0..2),
            _ => rng.random(),
        };
        let counter = match rng.random_range(0..3) {
            0 => rng.random_range(0..300),
            1 => COUNTER_MAX - rng.random_range(0..300),
            _ => rng.random_range(0..=COUNTER_MAX),
        };
        ids.insert(Gdid::from_parts(era, rng.random_range(0..=15), counter).unwrap());
    }
    let mut ids: Vec<Gdid> = ids.into_iter().collect();
    ids.sort_by_key(|id| id.as_bytes().iter().rev().copied().collect::<Vec<u8>>());
    ids
}
