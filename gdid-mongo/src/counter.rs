//! [`MongoCounter`] (one at a time) and [`ObjectIdGenerator`].

use bson::oid::ObjectId;
use gdid_core::generator::{Error, IdBatch, IdGenerator};

use crate::authority::{COUNTER_KEY, MongoAuthority};

/// A `u64` counter incremented in MongoDB for every id (`findOneAndUpdate` with `$inc`-like
/// semantics): continuous 1, 2, 3, … and monotonic, one round trip per id. The naive baseline of
/// the MongoDB write-ups. It shares the counter collection with [`MongoAuthority`]: its document
/// per (scope, sequence) is keyed by authority 0 whatever the collection's authority number, so
/// renumbering never starts a counter again; its document starts after the sequence's other
/// documents (a counter made, before it was keyed 0, from an authority numbered otherwise goes on
/// from where it was).
#[derive(Debug, Clone)]
pub struct MongoCounter {
    authority: MongoAuthority,
    scope: String,
    sequence: String,
}

impl MongoCounter {
    /// A counter of (scope, sequence) in the authority's collection.
    pub fn new(authority: MongoAuthority, scope: &str, sequence: &str) -> Self {
        MongoCounter {
            authority,
            scope: scope.to_owned(),
            sequence: sequence.to_owned(),
        }
    }

    /// The `_id` of the counter's document: `"0:scope:sequence"` (see [`MongoAuthority`] for its
    /// fields).
    pub fn document_id(&self) -> String {
        format!("{COUNTER_KEY}:{}:{}", self.scope, self.sequence)
    }

    async fn take(&self, n: u64) -> Result<(u64, u64), Error> {
        let block = self
            .authority
            .reserve(COUNTER_KEY, &self.scope, &self.sequence, n, true)
            .await
            .map_err(Error::from)?;
        if block.era() != 0 {
            return Err(Error::Exhausted(format!(
                "counter {}/{} passed 2^60",
                self.scope, self.sequence
            )));
        }
        Ok((block.start(), block.len()))
    }
}

impl IdGenerator for MongoCounter {
    type Id = u64;

    async fn next_id(&self) -> Result<u64, Error> {
        Ok(self.take(1).await?.0)
    }

    async fn next_ids(&self, n: u64) -> Result<IdBatch<u64>, Error> {
        let (first, len) = self.take(n).await?;
        let mut batch = IdBatch::consecutive_u64();
        batch.push_run(first, len);
        Ok(batch)
    }
}

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
