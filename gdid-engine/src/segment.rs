//! The shared block being served ([`Segment`]) and each thread's slice of it ([`Slot`]).
//!
//! Serving an id from a thread's slot is three relaxed loads and a relaxed store to memory only
//! that thread writes: no lock, no read-modify-write on shared memory, no clock, no allocation.
//! A slot is refilled from the shared segment by one compare-and-swap per slice.

use std::sync::atomic::Ordering::{Acquire, Relaxed, Release};

use super::authority::Block;
use super::config::GeneratorConfig;
use super::error::AuthorityError;
use super::sync::{AtomicBool, AtomicU32, AtomicU64, fence};
use gdid_core::Gdid;

/// Counters `start .. end` of one era and authority, taken from a segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Taken {
    pub(crate) era: u32,
    /// `authority << 60`, to be or-ed with a counter.
    pub(crate) high: u64,
    pub(crate) start: u64,
    pub(crate) end: u64,
}

impl Taken {
    pub(crate) fn len(&self) -> u64 {
        self.end - self.start
    }

    pub(crate) fn first(&self) -> Gdid {
        let (era, id64) = self.first_raw();
        Gdid::from_raw(era, id64)
    }

    /// [`first`](Self::first), as its era and `id64`.
    pub(crate) fn first_raw(&self) -> (u32, u64) {
        (self.era, self.high | self.start)
    }

    /// The ids taken, as a block, checked like every block (a take of at least one id of a checked
    /// block always passes).
    pub(crate) fn to_block(self) -> Result<Block, AuthorityError> {
        Block::new(self.era, self.first().authority(), self.start, self.len())
    }
}

/// The block currently served, with its shared cursor.
#[derive(Debug)]
pub(crate) struct Segment {
    era: u32,
    high: u64,
    start: u64,
    end: u64,
    next: AtomicU64,
    /// Once a take passes this counter, the next block is fetched in the background.
    low_water: u64,
    /// How many ids a thread takes at a time.
    pub(crate) slice: u64,
    prefetch_requested: AtomicBool,
}

impl Segment {
    /// A segment with nothing in it: the state before the first block.
    pub(crate) fn empty() -> Self {
        Segment {
            era: 0,
            high: 0,
            start: 0,
            end: 0,
            next: AtomicU64::new(0),
            low_water: u64::MAX,
            slice: 1,
            prefetch_requested: AtomicBool::new(true),
        }
    }

    pub(crate) fn new(block: Block, config: &GeneratorConfig) -> Self {
        let len = block.len();
        let low_water = if config.low_water_mark > 0.0 {
            // Counters left when the prefetch starts; at least one, so that it starts before the
            // block is used up.
            let left = ((len as f64) * config.low_water_mark).ceil();
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let left = (left as u64).clamp(1, len);
            block.end() - left
        } else {
            u64::MAX
        };
        // A thread takes at most 1/16 of the block, so that a few threads cannot strand it.
        let slice = (len / 16).clamp(1, config.max_slice);
        Segment {
            era: block.era(),
            high: u64::from(block.authority()) << Gdid::COUNTER_BITS,
            start: block.start(),
            end: block.end(),
            next: AtomicU64::new(block.start()),
            low_water,
            slice,
            prefetch_requested: AtomicBool::new(false),
        }
    }

    /// Takes up to `want` counters; `None` when the segment is used up.
    pub(crate) fn take_up_to(&self, want: u64) -> Option<Taken> {
        let mut next = self.next.load(Relaxed);
        loop {
            if next >= self.end {
                return None;
            }
            let end = self.end.min(next.saturating_add(want));
            match self.next.compare_exchange_weak(next, end, Relaxed, Relaxed) {
                Ok(_) => return Some(self.taken_of(next, end)),
                Err(actual) => next = actual,
            }
        }
    }

    /// Takes exactly `want` counters, or nothing.
    pub(crate) fn take_exact(&self, want: u64) -> Option<Taken> {
        let mut next = self.next.load(Relaxed);
        loop {
            let end = next.checked_add(want)?;
            if end > self.end {
                return None;
            }
            match self.next.compare_exchange_weak(next, end, Relaxed, Relaxed) {
                Ok(_) => return Some(self.taken_of(next, end)),
                Err(actual) => next = actual,
            }
        }
    }

    fn taken_of(&self, start: u64, end: u64) -> Taken {
        Taken {
            era: self.era,
            high: self.high,
            start,
            end,
        }
    }

    /// Whether `taken` took the segment past its low-water mark, for the first time.
    pub(crate) fn crossed_low_water(&self, taken: &Taken) -> bool {
        taken.end > self.low_water
            && !self.prefetch_requested.load(Relaxed)
            && !self.prefetch_requested.swap(true, Relaxed)
    }

    pub(crate) fn is_used_up(&self) -> bool {
        self.next.load(Relaxed) >= self.end
    }

    /// Counters taken so far.
    pub(crate) fn taken(&self) -> u64 {
        self.next.load(Relaxed).min(self.end) - self.start
    }

    /// Counters not taken yet.
    pub(crate) fn remaining(&self) -> u64 {
        self.end - self.next.load(Relaxed).min(self.end)
    }
}

/// One thread's slice: written only by its thread, read by others for statistics. When the thread
/// exits, the slot (with what is left of the slice) passes to the next thread that takes its
/// dense index, which serves that first ([`PerThread`](crate::per_thread::PerThread)).
///
/// Other threads read it consistently through `version` (a sequence lock): odd while [`fill`]
/// replaces the slice, so that a reader never combines the end of one slice with the cursor of
/// another (a fresh slot read mid-fill looked like a slice of millions of ids).
///
/// [`fill`]: Slot::fill
///
/// 32 bytes, aligned to 32 so that a slot never spans two cache lines. Slots of one thread sit
/// side by side (a thread's row in [`PerThread`](crate::per_thread::PerThread)); rows of two
/// threads never share a line.
#[derive(Debug)]
#[repr(C, align(32))]
pub(crate) struct Slot {
    next: AtomicU64,
    end: AtomicU64,
    high: AtomicU64,
    era: AtomicU32,
    /// Wraps after 2^31 fills: a reader compares two values read microseconds apart.
    version: AtomicU32,
}

#[cfg(not(gdid_loom))]
const _: () = assert!(size_of::<Slot>() == 32);

/// A slot with no slice, as an expression: [`Slot::new`] is `const` except under loom.
macro_rules! empty_slot {
    () => {
        Slot {
            next: AtomicU64::new(0),
            end: AtomicU64::new(0),
            high: AtomicU64::new(0),
            era: AtomicU32::new(0),
            version: AtomicU32::new(0),
        }
    };
}

impl Default for Slot {
    fn default() -> Self {
        Slot::new()
    }
}

impl Slot {
    /// A slot with no slice.
    #[cfg(not(gdid_loom))]
    pub(crate) const fn new() -> Self {
        empty_slot!()
    }

    /// A slot with no slice (loom's atomics are not `const`).
    #[cfg(gdid_loom)]
    pub(crate) fn new() -> Self {
        empty_slot!()
    }

    /// Empties the slot, for a generator to come. Only when no thread uses it any more (its
    /// generator was dropped).
    #[cfg(not(gdid_loom))]
    pub(crate) fn reset(&self) {
        self.next.store(0, Relaxed);
        self.end.store(0, Relaxed);
    }

    /// The next id of the slice, if any is left.
    #[cfg(test)]
    fn take(&self) -> Option<Gdid> {
        self.take_raw().map(|(era, id64)| id_of(era, id64))
    }

    /// The next id of the slice, if any is left, as its era and `id64`: the caller builds the id
    /// where it puts it (see [`id_of`]). Only the owning thread calls this.
    #[inline]
    pub(crate) fn take_raw(&self) -> Option<(u32, u64)> {
        let next = self.next.load(Relaxed);
        if next < self.end.load(Relaxed) {
            self.next.store(next + 1, Relaxed);
            Some((self.era.load(Relaxed), self.high.load(Relaxed) | next))
        } else {
            None
        }
    }

    /// Up to `want` ids of the slice, as one run taken. Only the owning thread calls this.
    pub(crate) fn take_many(&self, want: u64) -> Option<Taken> {
        let next = self.next.load(Relaxed);
        let end = self.end.load(Relaxed).min(next.saturating_add(want));
        if next >= end {
            return None;
        }
        self.next.store(end, Relaxed);
        Some(Taken {
            era: self.era.load(Relaxed),
            high: self.high.load(Relaxed),
            start: next,
            end,
        })
    }

    /// Replaces the slice with `taken`. Only the owning thread calls this, and only once the
    /// slice is used up: the ids left in it would be lost (never served, counted as issued).
    pub(crate) fn fill(&self, taken: &Taken) {
        debug_assert!(
            self.next.load(Relaxed) >= self.end.load(Relaxed),
            "a slice with ids left is being replaced"
        );
        let version = self.version.load(Relaxed);
        self.version.store(version.wrapping_add(1), Relaxed);
        fence(Release);
        self.era.store(taken.era, Relaxed);
        self.high.store(taken.high, Relaxed);
        self.end.store(taken.end, Relaxed);
        self.next.store(taken.start, Relaxed);
        self.version.store(version.wrapping_add(2), Release);
    }

    /// Ids reserved by the slice and not served yet, at some instant during the call; 0 when the
    /// owner kept replacing the slice while this was read (a few reads are tried).
    pub(crate) fn unused(&self) -> u64 {
        for _ in 0..4 {
            let before = self.version.load(Acquire);
            let end = self.end.load(Relaxed);
            let next = self.next.load(Relaxed);
            fence(Acquire);
            if before % 2 == 0 && self.version.load(Relaxed) == before {
                // `next` only grows towards `end` within one version.
                return end.saturating_sub(next);
            }
        }
        0
    }
}

/// `Gdid::from_raw(era, id64)`, built as its first 8 bytes and its last 4: the halves in which
/// a 12-byte id (alone or in an `Option`) is copied. Built as 4 and 8 (`from_raw`), every copy of
/// the id that followed read a u64 across two stores, which the CPU cannot forward from the store
/// buffer: a stall of about a dozen cycles per id on the fast path. A `Result<Gdid, Error>` is
/// copied the other way, as 4 and 8 (the error's pointer is its second 8 bytes): `NextId` builds
/// its id with `from_raw`.
#[inline(always)]
pub(crate) fn id_of(era: u32, id64: u64) -> Gdid {
    let head = ((u64::from(era) << 32) | (id64 >> 32)).to_be_bytes();
    let tail = id64.to_be_bytes();
    Gdid::from_bytes([
        head[0], head[1], head[2], head[3], head[4], head[5], head[6], head[7], tail[4], tail[5],
        tail[6], tail[7],
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn segment(len: u64, low_water_mark: f64) -> Segment {
        let config = GeneratorConfig {
            low_water_mark,
            ..GeneratorConfig::default()
        };
        Segment::new(Block::new(2, 5, 100, len).unwrap(), &config)
    }

    #[test]
    fn takes_never_overlap_and_never_pass_the_end() {
        let seg = segment(10, 0.5);
        let a = seg.take_up_to(4).unwrap();
        let b = seg.take_up_to(4).unwrap();
        let c = seg.take_up_to(4).unwrap();
        assert_eq!(
            (a.start, a.end, b.start, b.end, c.start, c.end),
            (100, 104, 104, 108, 108, 110)
        );
        assert_eq!(seg.take_up_to(1), None);
        assert!(seg.is_used_up());
        assert_eq!(seg.taken(), 10);
        assert_eq!(a.first().to_string(), "2:5:100");
    }

    #[test]
    fn exact_takes_take_all_or_nothing() {
        let seg = segment(10, 0.5);
        assert_eq!(seg.take_exact(11), None);
        assert_eq!(seg.take_exact(7).map(|c| c.len()), Some(7));
        assert_eq!(seg.take_exact(4), None);
        assert_eq!(seg.take_exact(3).map(|c| c.len()), Some(3));
        assert_eq!(seg.take_exact(u64::MAX), None);
    }

    #[test]
    fn the_low_water_mark_fires_once() {
        let seg = segment(10, 0.5);
        let first = seg.take_up_to(5).unwrap();
        assert!(
            !seg.crossed_low_water(&first),
            "5 of 10 left is not below half"
        );
        let second = seg.take_up_to(1).unwrap();
        assert!(seg.crossed_low_water(&second));
        let third = seg.take_up_to(1).unwrap();
        assert!(!seg.crossed_low_water(&third), "only once per segment");
        let off = segment(10, 0.0);
        let all = off.take_up_to(10).unwrap();
        assert!(!off.crossed_low_water(&all), "prefetch off");
    }

    #[test]
    fn ids_are_built_as_from_raw_builds_them() {
        for (era, id64) in [
            (0, 0),
            (2, 5 << 60 | 100),
            (u32::MAX, u64::MAX),
            (0x0102_0304, 0x1122_3344_5566_7788),
        ] {
            assert_eq!(id_of(era, id64), Gdid::from_raw(era, id64));
        }
    }

    #[test]
    fn a_slot_serves_its_slice_in_order() {
        let slot = Slot::default();
        assert_eq!(slot.take(), None);
        let seg = segment(10, 0.5);
        slot.fill(&seg.take_up_to(3).unwrap());
        let ids: Vec<String> = std::iter::from_fn(|| slot.take())
            .map(|g| g.to_string())
            .collect();
        assert_eq!(ids, ["2:5:100", "2:5:101", "2:5:102"]);
        slot.fill(&seg.take_up_to(3).unwrap());
        assert_eq!(slot.unused(), 3);
        assert_eq!(
            slot.take_many(2).map(|c| (c.start, c.end)),
            Some((103, 105))
        );
        assert_eq!(
            slot.take_many(2).map(|c| (c.start, c.end)),
            Some((105, 106))
        );
        assert_eq!(slot.take_many(2), None);
    }
}
