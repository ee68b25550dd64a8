//! Sharded counter ranges: the decoding of stored range records and layout records
//! (`RangeState::from_stored`, `RangeLayout::from_stored`), the layout checks (`check_stored`,
//! `check_state`), and the engine (`ShardedCounter::create`, then `next_ids`) over an in-memory
//! store holding arbitrary records, as a corrupt or tampered database would.
//!
//! - never panics, whatever the stored values;
//! - an accepted record holds what the decoders promise (numbers in bounds, `next` at most one
//!   past `max`, a valid layout);
//! - `create` succeeds only when the layout record is the layout asked and the ranges stored are
//!   exactly its ranges; a refused layout writes nothing;
//! - whatever the records are changed to afterwards, every id served is inside a range of the
//!   layout and no id is served twice; a failure is `Corrupt`, `Exhausted` or `InvalidCount`.
#![no_main]

use std::collections::{BTreeMap, HashSet};
use std::future::Future;
use std::ops::Range;
use std::sync::Mutex;
use std::task::{Context, Poll, Waker};

use gdid_engine::{
    Error, ErrorDetail, IdGenerator, Pick, RangeLayout, ShardedCounter,
    backend::{RangeFields, RangeState, RangeStore},
};
use libfuzzer_sys::arbitrary::{Arbitrary, Result as Arbitrarily, Unstructured};
use libfuzzer_sys::fuzz_target;

#[derive(Debug)]
enum Record {
    Absent,
    /// The layout asked for.
    Same,
    Raw([i64; 3]),
}

#[derive(Debug)]
struct Input {
    /// The layout asked for, reduced to a valid one of at most 16 ranges.
    base: u64,
    size: u64,
    ranges: u8,
    random_pick: bool,
    /// The layout record before `create`.
    record: Record,
    /// Range records before `create` (written before layouts were recorded, or corrupt).
    before: Vec<[i64; 3]>,
    /// Range records written over the store's after `create`.
    after: Vec<[i64; 3]>,
    /// How many ids to ask for, call after call.
    asks: Vec<u16>,
    /// Take after take: whether another process used the range up just before (between the
    /// list and the take of a split batch, say).
    concurrent: Vec<bool>,
    /// Arbitrary states for the layout checks alone.
    states: Vec<(u32, u64, u64)>,
    raw_layout: (u64, u64, u32),
}

impl<'a> Arbitrary<'a> for Record {
    fn arbitrary(u: &mut Unstructured<'a>) -> Arbitrarily<Self> {
        Ok(match u.int_in_range(0..=2u8)? {
            0 => Record::Absent,
            1 => Record::Same,
            _ => Record::Raw(u.arbitrary()?),
        })
    }
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Arbitrarily<Self> {
        Ok(Input {
            base: u.arbitrary()?,
            size: u.arbitrary()?,
            ranges: u.arbitrary()?,
            random_pick: u.arbitrary()?,
            record: u.arbitrary()?,
            before: u.arbitrary()?,
            after: u.arbitrary()?,
            asks: u.arbitrary()?,
            concurrent: u.arbitrary()?,
            states: u.arbitrary()?,
            raw_layout: u.arbitrary()?,
        })
    }
}

/// Records in memory, keyed like a store's primary key: one record per range number. A take
/// behaves as the SQL statement: only a record of non-negative values with `n` left moves.
#[derive(Debug, Default)]
struct Memory {
    rows: Mutex<BTreeMap<i64, (i64, i64)>>,
    layout: Mutex<Option<[i64; 3]>>,
    /// Take after take, whether another process uses the range up first.
    concurrent: Mutex<Vec<bool>>,
}

impl RangeStore for &Memory {
    fn sequence(&self) -> &str {
        "fuzz"
    }

    async fn take(&self, range: u32, n: u64) -> Result<Option<u64>, Error> {
        let mut rows = self.rows.lock().unwrap();
        let Some((next, max)) = rows.get_mut(&i64::from(range)) else {
            return Ok(None);
        };
        if self.concurrent.lock().unwrap().pop() == Some(true) && *next >= 0 && *next <= *max {
            *next = *max + 1;
        }
        let n = i128::from(n);
        if *next < 0 || *max < 0 || i128::from(*next) + n - 1 > i128::from(*max) {
            return Ok(None);
        }
        let moved = i64::try_from(i128::from(*next) + n).map_err(|_| Error::store("overflow"))?;
        *next = moved;
        Ok(Some(moved.unsigned_abs()))
    }

    async fn list(&self) -> Result<Vec<RangeState>, Error> {
        let rows = self.rows.lock().unwrap().clone();
        rows.into_iter()
            .map(|(range, (next, max))| {
                RangeState::from_stored(
                    &self.range_record(range),
                    &RangeFields::GENERIC,
                    [range, next, max],
                )
            })
            .collect()
    }

    async fn read_layout(&self) -> Result<Option<RangeLayout>, Error> {
        let record = *self.layout.lock().unwrap();
        record
            .map(|stored| RangeLayout::from_stored(&self.layout_record(), stored))
            .transpose()
    }

    async fn insert_layout(&self, layout: RangeLayout) -> Result<(), Error> {
        self.layout
            .lock()
            .unwrap()
            .get_or_insert(stored_layout(layout));
        Ok(())
    }

    async fn insert_range(&self, range: u32, values: Range<u64>) -> Result<(), Error> {
        let value = |v: u64| i64::try_from(v).unwrap();
        self.rows
            .lock()
            .unwrap()
            .entry(i64::from(range))
            .or_insert((value(values.start), value(values.end - 1)));
        Ok(())
    }
}

fn stored_layout(layout: RangeLayout) -> [i64; 3] {
    let value = |v: u64| i64::try_from(v).unwrap();
    [
        value(layout.base()),
        value(layout.size()),
        i64::from(layout.ranges()),
    ]
}

/// Runs a future of the in-memory store, which never waits.
fn ready<T>(future: impl Future<Output = T>) -> T {
    let mut future = std::pin::pin!(future);
    match future
        .as_mut()
        .poll(&mut Context::from_waker(Waker::noop()))
    {
        Poll::Ready(value) => value,
        Poll::Pending => panic!("the in-memory store never waits"),
    }
}

fuzz_target!(|input: Input| {
    check_decoders(&input);
    check_layout_checks(&input);
    check_engine(&input);
});

fn check_decoders(input: &Input) {
    let fields = RangeFields::GENERIC;
    for &[range, next, max] in input.before.iter().chain(&input.after) {
        if let Ok(state) = RangeState::from_stored("r", &fields, [range, next, max]) {
            assert_eq!(i64::from(state.range), range);
            assert_eq!(i64::try_from(state.next), Ok(next));
            assert_eq!(i64::try_from(state.max), Ok(max));
            assert!(state.next <= state.max + 1);
        } else {
            assert!(
                range < 0
                    || range > i64::from(u32::MAX)
                    || next < 0
                    || max < 0
                    || i128::from(next) > i128::from(max) + 1
            );
        }
        if let Ok(layout) = RangeLayout::from_stored("l", [range, next, max]) {
            assert_eq!(stored_layout(layout), [range, next, max]);
            let last = layout.range(layout.ranges() - 1);
            assert!(last.end - 1 <= i64::MAX.unsigned_abs());
        }
    }
}

fn check_layout_checks(input: &Input) {
    let (base, size, ranges) = input.raw_layout;
    let Ok(layout) = RangeLayout::new(base, size, ranges) else {
        return;
    };
    let states: Vec<RangeState> = input
        .states
        .iter()
        .map(|&(range, next, max)| RangeState { range, next, max })
        .collect();
    for state in &states {
        if layout.check_state(state, &RangeFields::GENERIC).is_ok() {
            let range = layout.range(state.range);
            assert!(state.range < layout.ranges());
            assert_eq!(state.max, range.end - 1);
            assert!(range.start <= state.next && state.next <= range.end);
        }
    }
    if let Ok(first_missing) = layout.check_stored(&states) {
        assert_eq!(first_missing as usize, states.len());
        for (k, state) in (0..).zip(&states) {
            assert_eq!(state.range, k);
        }
    }
}

fn check_engine(input: &Input) {
    let Ok(layout) = RangeLayout::new(
        input.base % (1 << 40),
        input.size % (i64::MAX.unsigned_abs() / 32) + 1,
        u32::from(input.ranges % 16) + 1,
    ) else {
        return;
    };
    let memory = Memory::default();
    *memory.layout.lock().unwrap() = match input.record {
        Record::Absent => None,
        Record::Same => Some(stored_layout(layout)),
        Record::Raw(raw) => Some(raw),
    };
    for &[range, next, max] in &input.before {
        memory.rows.lock().unwrap().insert(range, (next, max));
    }
    let rows_before = memory.rows.lock().unwrap().clone();
    let record_before = *memory.layout.lock().unwrap();
    let pick = if input.random_pick {
        Pick::Random
    } else {
        Pick::RoundRobin
    };
    let ids = match ready(ShardedCounter::create(&memory, layout, pick)).map_err(Error::into_detail)
    {
        Ok(ids) => ids,
        Err(ErrorDetail::InvalidConfig { .. }) => {
            assert_eq!(
                *memory.rows.lock().unwrap(),
                rows_before,
                "refused, yet written"
            );
            assert_eq!(
                *memory.layout.lock().unwrap(),
                record_before,
                "refused, yet written"
            );
            return;
        }
        Err(ErrorDetail::Corrupt(_)) => return,
        Err(other) => panic!("create failed with {other:?}"),
    };
    assert_eq!(*memory.layout.lock().unwrap(), Some(stored_layout(layout)));
    let stored = ready((&memory).list()).expect("the ranges of a created layout decode");
    assert_eq!(layout.check_stored(&stored), Ok(layout.ranges()));

    for &[range, next, max] in &input.after {
        memory.rows.lock().unwrap().insert(range, (next, max));
    }
    *memory.concurrent.lock().unwrap() = input.concurrent.iter().rev().copied().collect();
    let mut served = HashSet::new();
    for &ask in &input.asks {
        match ready(ids.next_ids(u64::from(ask % 300))).map_err(Error::into_detail) {
            Ok(batch) => {
                assert_eq!(batch.len(), u64::from(ask % 300));
                for id in batch.iter() {
                    assert!(
                        (0..layout.ranges()).any(|k| layout.range(k).contains(&id)),
                        "{id} outside the layout"
                    );
                    assert!(served.insert(id), "{id} served twice");
                }
            }
            Err(
                ErrorDetail::Corrupt(_)
                | ErrorDetail::Exhausted(_)
                | ErrorDetail::InvalidCount { .. },
            ) => {}
            Err(other) => panic!("next_ids failed with {other:?}"),
        }
    }
}
