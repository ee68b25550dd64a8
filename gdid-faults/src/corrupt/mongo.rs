//! The corrupt-document cases on MongoDB: every kind of corruption can be stored (a BSON field
//! takes any type, or none).

use bson::{Bson, Document, doc};
use gdid_engine::{Authority, IdGenerator, Pick, RangeLayout};
use gdid_mongo::{MongoAuthority, MongoCounter, MongoShardedCounter, MongoWindowShard};
use gdid_testkit::fresh;
use mongodb::{Client, Database};

use super::{Answer, CaseOutcome, Place, Via, ask, ask_via, run_case};
use crate::error::SetupError;

/// The database of every collection the cases write.
const DATABASE: &str = "gdid_faults";

/// The scope of every counter document the cases write.
const SCOPE: &str = "faults";

/// How a document is corrupted: an update of `field`, as `$set` or `$unset` or a pipeline.
#[derive(Debug, Clone)]
struct Corruption {
    field: &'static str,
    update: Update,
}

#[derive(Debug, Clone)]
enum Update {
    /// `{ $set: { field: value } }`.
    Set(Bson),
    /// `{ $unset: { field: "" } }`.
    Unset,
    /// `[{ $set: stage }]`: values computed from the document as it was (`field` among them).
    Computed(Document),
}

impl Corruption {
    fn set(field: &'static str, value: impl Into<Bson>) -> Self {
        Corruption {
            field,
            update: Update::Set(value.into()),
        }
    }

    fn unset(field: &'static str) -> Self {
        Corruption {
            field,
            update: Update::Unset,
        }
    }

    fn computed(field: &'static str, stage: Document) -> Self {
        Corruption {
            field,
            update: Update::Computed(stage),
        }
    }

    /// Applies it to the documents `filter` matches.
    async fn apply(
        &self,
        database: &Database,
        collection: &str,
        filter: Document,
    ) -> Result<(), SetupError> {
        let collection = database.collection::<Document>(collection);
        let field = self.field;
        let result = match &self.update {
            Update::Set(value) => {
                let update = doc! { "$set": { field: value.clone() } };
                collection.update_many(filter, update).await?
            }
            Update::Unset => {
                let update = doc! { "$unset": { field: "" } };
                collection.update_many(filter, update).await?
            }
            Update::Computed(stage) => {
                let update = vec![doc! { "$set": stage.clone() }];
                collection.update_many(filter, update).await?
            }
        };
        if result.modified_count == 0 {
            return Err(format!("the corruption of {field} changed no document").into());
        }
        Ok(())
    }
}

impl std::fmt::Display for Corruption {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.update {
            Update::Set(value) => write!(f, "{} = {value}", self.field),
            Update::Unset => write!(f, "{} unset", self.field),
            Update::Computed(stage) => write!(f, "$set {stage}"),
        }
    }
}

/// Runs the cases on the server of `url`.
pub(super) async fn cases(url: &str) -> Result<Vec<CaseOutcome>, SetupError> {
    let database = Client::with_uri_str(url).await?.database(DATABASE);
    let authority = MongoAuthority::new(&database, &fresh("corrupt_counters"), 1)?;
    let mut outcomes = Vec::new();
    let counter_cases = [
        (
            "wrong type: authority counter (string)",
            Corruption::set("next", "abc"),
            Via::Authority,
        ),
        (
            "wrong type: authority counter (double)",
            Corruption::set("next", 5.5),
            Via::Authority,
        ),
        (
            "negative: authority counter",
            Corruption::set("next", -1_i64),
            Via::Authority,
        ),
        (
            "zero: authority counter (no authority writes 0)",
            Corruption::set("next", 0_i64),
            Via::Authority,
        ),
        (
            "negative: era, through a BlockGenerator",
            Corruption::set("era", -1_i64),
            Via::BlockGenerator,
        ),
        (
            "missing: authority counter",
            Corruption::unset("next"),
            Via::Authority,
        ),
        (
            "missing: one-at-a-time era",
            Corruption::unset("era"),
            Via::Counter,
        ),
        (
            "wrong type: one-at-a-time era (string)",
            Corruption::set("era", "x"),
            Via::Counter,
        ),
    ];
    for (case, corruption, via) in counter_cases {
        let sequence = fresh("corrupt");
        let id = authority.counter_id(SCOPE, &sequence);
        let corrupted = format!(
            "{}.{} document {id}: {corruption}",
            DATABASE,
            authority.collection().name()
        );
        let task = counter_case(
            database.clone(),
            authority.clone(),
            sequence,
            corruption,
            via,
        );
        outcomes.push(run_case(case, corrupted, task).await?);
    }
    let ranges = fresh("corrupt_ranges");
    let range_cases = [
        (
            "range overrun: sharded counter, current beyond its end",
            Corruption::computed("next", doc! { "next": { "$add": ["$max", 10_i64] } }),
        ),
        (
            "negative: sharded counter's current value",
            Corruption::set("next", -1_i64),
        ),
        (
            "missing: sharded counter's current value",
            Corruption::unset("next"),
        ),
        (
            "wrong type: sharded counter's current value (string)",
            Corruption::set("next", "abc"),
        ),
    ];
    for (case, corruption) in range_cases {
        let sequence = fresh("corrupt");
        let corrupted = format!("{DATABASE}.{ranges} document {sequence}:0: {corruption}");
        let task = range_case(database.clone(), ranges.clone(), sequence, corruption);
        outcomes.push(run_case(case, corrupted, task).await?);
    }
    let window_cases = [
        (
            "start > end: window start moved past its end",
            Corruption::computed("start", doc! { "start": { "$add": ["$end", 100_i64] } }),
        ),
        (
            "start > end: window end moved below its start",
            Corruption::computed(
                "end",
                doc! {
                    "end": { "$add": ["$start", 5_i64] },
                    "start": { "$add": ["$start", 50_i64] },
                },
            ),
        ),
    ];
    for (case, corruption) in window_cases {
        let sequence = fresh("corrupt");
        let corrupted = format!("{DATABASE}.gdid_windows document of {sequence}: {corruption}");
        let task = window_case(database.clone(), sequence, corruption);
        outcomes.push(run_case(case, corrupted, task).await?);
    }
    Ok(outcomes)
}

/// A counter document of `sequence`, corrupted.
async fn counter_case(
    database: Database,
    authority: MongoAuthority,
    sequence: String,
    corruption: Corruption,
    via: Via,
) -> Result<Vec<Answer>, SetupError> {
    // The row the path asked through reads: the authority's, or the one-at-a-time counter's.
    let id = if via == Via::Counter {
        let counter = MongoCounter::new(authority.clone(), SCOPE, &sequence);
        counter.next_id().await?;
        authority.counter_document_id(SCOPE, &sequence)
    } else {
        authority.allocate(SCOPE, &sequence, 1).await?;
        authority.counter_id(SCOPE, &sequence)
    };
    corruption
        .apply(
            &database,
            authority.collection().name(),
            doc! { "_id": &id },
        )
        .await?;
    let place = Place::new(id, corruption.field);
    ask_via(
        via,
        &place,
        (SCOPE, &sequence),
        authority,
        MongoCounter::new,
    )
    .await
}

/// The one range document of a sharded counter of `sequence`, corrupted.
async fn range_case(
    database: Database,
    collection: String,
    sequence: String,
    corruption: Corruption,
) -> Result<Vec<Answer>, SetupError> {
    let layout = RangeLayout::new(0, 1_000, 1)?;
    let ids =
        MongoShardedCounter::create(&database, &collection, &sequence, layout, Pick::RoundRobin)
            .await?;
    ids.next_id().await?;
    let id = format!("{sequence}:0");
    corruption
        .apply(&database, &collection, doc! { "_id": &id })
        .await?;
    let place = Place::new(id, corruption.field);
    Ok(ask(&place, || ids.next_id()).await)
}

/// The one window document of `sequence`, corrupted.
async fn window_case(
    database: Database,
    sequence: String,
    corruption: Corruption,
) -> Result<Vec<Answer>, SetupError> {
    let corrupt = corruption.apply(&database, "gdid_windows", doc! { "sequence": &sequence });
    let place = Place::new(&sequence, corruption.field);
    let shard = MongoWindowShard::new(&database);
    super::window_case(shard, &sequence, corrupt, place).await
}
