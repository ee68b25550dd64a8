//! [`SqlShardedCounter`]: N rows of the `gdid_ranges` table, each owning a fixed range of values,
//! and the sequence's layout record in `gdid_range_layouts` (see `gdid_engine::ShardedCounter`
//! for the scheme). This file holds the store operations; the creation of a layout, the pick,
//! the skipping, the splitting and every check of stored values are gdid-engine's.

use std::ops::Range;

use gdid_engine::backend::retry;
use gdid_engine::{
    Error as IdError, ErrorDetail, NameKind, Pick, RangeLayout, ShardedCounter,
    backend::{LAYOUT_FIELDS, RangeFields, RangeState, RangeStore, StoredInt, validate_name},
};

use crate::error::{Error, is_lost_race};
use crate::lineage::{self, LineageSql};
use crate::sharded_rows;
use crate::store::SqlStore;
use crate::stored::stored_int;

/// The ranges of one sequence in a SQL store.
#[derive(Debug)]
pub struct SqlRanges {
    store: SqlStore,
    sequence: String,
    /// The server's lineage SQL (`None` for SQLite).
    lineage: Option<LineageSql>,
}

/// A value the layout keeps within `i64` as SQL binds it.
fn bound(value: u64) -> i64 {
    i64::try_from(value).unwrap_or(i64::MAX) // RangeLayout keeps values in i64
}

/// The integer of a [`described`](crate::stored::described) column, field `field` of `record`
/// (the engine's one decoder; the engine checks its range).
fn integer(record: &str, field: &str, described: Option<&str>) -> Result<i64, IdError> {
    Ok(stored_int(described).decode(record, field, i64::MIN..=i64::MAX)?)
}

impl RangeStore for SqlRanges {
    const FIELDS: RangeFields = RangeFields {
        range: "shard",
        next: "next_value",
        max: "max_value",
    };

    fn sequence(&self) -> &str {
        &self.sequence
    }

    fn range_record(&self, range: i64) -> String {
        format!(
            "the gdid_ranges row (sequence {:?}, shard {range})",
            self.sequence
        )
    }

    fn layout_record(&self) -> String {
        format!("the gdid_range_layouts row (sequence {:?})", self.sequence)
    }

    async fn take(&self, range: u32, n: u64) -> Result<Option<u64>, IdError> {
        let n =
            i64::try_from(n).map_err(|_| IdError::invalid_count(n, "too many ids for one call"))?;
        let range = i32::try_from(range).map_err(IdError::store)?;
        let lineage = self.lineage.as_ref();
        let take = || sharded_rows::take(&self.store, lineage, &self.sequence, range, n);
        let next = retry::run_driver(retry::ATTEMPTS, take, is_lost_race)
            .await
            .map_err(IdError::store)?;
        if next.is_none() {
            self.check_lineage(range).await?;
        }
        let record = || self.range_record(i64::from(range));
        next.map(|next| StoredInt::from(next).decode(&record(), Self::FIELDS.next, 0..=i64::MAX))
            .transpose()
            .map_err(IdError::from)
    }

    async fn list(&self) -> Result<Vec<RangeState>, IdError> {
        let rows = sharded_rows::list(&self.store, &self.sequence)
            .await
            .map_err(IdError::store)?;
        rows.into_iter()
            .map(|[range, next, max]| {
                let fields = Self::FIELDS;
                let any_row = format!("a gdid_ranges row of sequence {:?}", self.sequence);
                let range = integer(&any_row, fields.range, range.as_deref())?;
                let record = self.range_record(range);
                let next = integer(&record, fields.next, next.as_deref())?;
                let max = integer(&record, fields.max, max.as_deref())?;
                RangeState::from_stored(&record, &fields, [range, next, max])
            })
            .collect()
    }

    async fn read_layout(&self) -> Result<Option<RangeLayout>, IdError> {
        let Some(values) = sharded_rows::layout(&self.store, &self.sequence)
            .await
            .map_err(IdError::store)?
        else {
            return Ok(None);
        };
        let record = self.layout_record();
        let mut stored = [0; 3];
        for ((value, described), field) in stored.iter_mut().zip(&values).zip(LAYOUT_FIELDS) {
            *value = integer(&record, field, described.as_deref())?;
        }
        RangeLayout::from_stored(&record, stored).map(Some)
    }

    async fn insert_layout(&self, layout: RangeLayout) -> Result<(), IdError> {
        let stored = [
            bound(layout.base()),
            bound(layout.size()),
            i64::from(layout.ranges()),
        ];
        let insert = || sharded_rows::insert_layout(&self.store, &self.sequence, stored);
        retry::run_driver(retry::ATTEMPTS, insert, is_lost_race)
            .await
            .map_err(IdError::store)
    }

    async fn insert_range(&self, range: u32, values: Range<u64>) -> Result<(), IdError> {
        let range = i32::try_from(range).map_err(IdError::store)?;
        let (first, last) = (bound(values.start), bound(values.end - 1));
        let insert = || sharded_rows::insert(&self.store, &self.sequence, range, first, last);
        retry::run_driver(retry::ATTEMPTS, insert, is_lost_race)
            .await
            .map_err(IdError::store)
    }
}

impl SqlRanges {
    /// After a take that matched nothing: [`ErrorDetail::Switched`] when the range was last moved
    /// on another server (a used-up or corrupt range is the engine's to tell).
    async fn check_lineage(&self, range: i32) -> Result<(), IdError> {
        let Some(lineage) = &self.lineage else {
            return Ok(());
        };
        let same = sharded_rows::same_lineage(&self.store, lineage, &self.sequence, range);
        if same.await.map_err(IdError::store)? {
            return Ok(());
        }
        Err(ErrorDetail::Switched {
            record: self.range_record(i64::from(range)),
            remedy: format!(
                "it may be behind values it handed out, and a u64 has no era to move to: move \
                 every range of the sequence past what it may have issued since (gdid sequences \
                 skip-ranges --sequence {} --by N), then it issues again",
                self.sequence
            ),
        }
        .into())
    }
}

/// A `u64` id generator over N fixed ranges of the `gdid_ranges` table: ids of a fixed number of
/// digits, writers spread over N rows, random or round-robin pick, used-up ranges skipped.
#[derive(Debug)]
pub struct SqlShardedCounter(ShardedCounter<SqlRanges>);

impl SqlShardedCounter {
    /// Creates the tables and the rows of `layout` if missing. The first layout created for a
    /// sequence is its layout for good: it is recorded (one insert-if-absent in
    /// `gdid_range_layouts`) before any range row is written, so processes racing to create
    /// layouts on a fresh sequence agree on one; those that asked for another get
    /// [`Error::Layout`], and nothing was written for them.
    ///
    /// # Errors
    ///
    /// [`Error::Name`] for a bad sequence name, [`Error::Schema`] when the tables or rows cannot
    /// be created, [`Error::Layout`] when the sequence has another layout (recorded, or rows
    /// stored that disagree with `layout`: going on could repeat ids) or stored rows are corrupt.
    pub async fn create(
        store: SqlStore,
        sequence: &str,
        layout: RangeLayout,
        pick: Pick,
    ) -> Result<SqlShardedCounter, Error> {
        validate_name(NameKind::Sequence, sequence)?;
        sharded_rows::ensure_schema(&store)
            .await
            .map_err(Error::Schema)?;
        let lineage = LineageSql::of(&store).await.map_err(Error::Schema)?;
        if let Some(lineage) = &lineage {
            // Ranges new here are the server's once the store record is settled on it.
            lineage::settle(&store, lineage)
                .await
                .map_err(Error::Schema)?;
        }
        let ranges = SqlRanges {
            store,
            sequence: sequence.to_owned(),
            lineage,
        };
        ShardedCounter::create(ranges, layout, pick)
            .await
            .map(SqlShardedCounter)
            .map_err(|e| setup_error(sequence, e))
    }

    /// The layout.
    pub fn layout(&self) -> RangeLayout {
        self.0.layout()
    }

    /// Moves every range of `sequence` in `store` forward by `by` values (at most to its end),
    /// in one statement, as after a failover to a replica or a restore that may have lost values
    /// the ranges issued: they refuse to issue until then ([`ErrorDetail::Switched`]). Each range
    /// takes the lineage of the server. Safe while generators run. How many ranges moved.
    ///
    /// # Errors
    ///
    /// [`Error::Name`] for a bad sequence name, [`Error::Layout`] for `by` of 0 or past 2^62,
    /// [`Error::Schema`] when the store fails.
    pub async fn skip(store: &SqlStore, sequence: &str, by: u64) -> Result<u64, Error> {
        validate_name(NameKind::Sequence, sequence)?;
        let by = i64::try_from(by)
            .ok()
            .filter(|by| (1..=1 << 62).contains(by))
            .ok_or_else(|| Error::Layout {
                sequence: sequence.to_owned(),
                reason: format!("cannot skip {by} values: expected 1 to 2^62"),
            })?;
        sharded_rows::ensure_schema(store)
            .await
            .map_err(Error::Schema)?;
        let lineage = LineageSql::of(store).await.map_err(Error::Schema)?;
        sharded_rows::skip(store, lineage.as_ref(), sequence, by)
            .await
            .map_err(Error::Schema)
    }
}

/// A failure to create a layout as [`Error`]: a refused layout or a corrupt record is
/// [`Error::Layout`], the driver's error is [`Error::Schema`].
fn setup_error(sequence: &str, error: IdError) -> Error {
    let layout = |reason: String| Error::Layout {
        sequence: sequence.to_owned(),
        reason,
    };
    match error.into_detail() {
        ErrorDetail::InvalidConfig { reason } | ErrorDetail::Corrupt(reason) => layout(reason),
        ErrorDetail::Store(store) => {
            match std::sync::Arc::try_unwrap(store).map(|e| e.downcast::<sqlx::Error>()) {
                Ok(Ok(driver)) => Error::Schema(*driver),
                Ok(Err(other)) => Error::Schema(sqlx::Error::Protocol(other.to_string())),
                Err(shared) => Error::Schema(sqlx::Error::Protocol(shared.to_string())),
            }
        }
        other => layout(other.to_string()),
    }
}

gdid_engine::delegate_id_generator!(SqlShardedCounter => u64);
