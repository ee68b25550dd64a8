//! [`MongoCounter`] (one at a time) and [`ObjectIdGenerator`].

use bson::oid::ObjectId;
use gdid_engine::{Error, IdBatch, IdGenerator, OneAtATime};

use crate::authority::MongoAuthority;

/// A `u64` counter incremented in MongoDB for every id (`findOneAndUpdate` with `$inc`-like
/// semantics): continuous 1, 2, 3, … and monotonic, one round trip per id: the simplest way to
/// number documents. `MongoCounter::new(authority, scope, sequence)`; the rule is gdid-engine's
/// [`OneAtATime`], over the [`CounterRow`](gdid_engine::backend::CounterRow) every
/// `CounterStore` is.
///
/// It shares the counter collection with [`MongoAuthority`]: its document per (scope, sequence)
/// is keyed by authority 0 whatever the collection's authority number, so renumbering never
/// starts a counter again; its document starts after the sequence's other documents (a counter
/// made, before it was keyed 0, from an authority numbered otherwise goes on from where it was).
pub type MongoCounter = OneAtATime<MongoAuthority>;

/// Driver-side `ObjectId`s: no round trip at all; 4-second time resolution, a per-process random
/// part and a 3-byte counter.
#[derive(Debug, Clone, Copy, Default)]
pub struct ObjectIdGenerator;

impl IdGenerator for ObjectIdGenerator {
    type Id = ObjectId;

    async fn next_id(&self) -> Result<ObjectId, Error> {
        Ok(ObjectId::new())
    }

    async fn next_ids(&self, n: u64) -> Result<IdBatch<ObjectId>, Error> {
        Ok(IdBatch::singles((0..n).map(|_| ObjectId::new())))
    }
}
