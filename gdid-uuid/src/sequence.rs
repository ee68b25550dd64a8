//! [`Sequence`]: the lock-free, strictly increasing time-and-counter value behind the v7 and
//! v1/v6 generators.

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::TimestampOverflow;

/// The last value handed out, in the unit of the UUID version's timestamp field widened by its
/// counter: `ms << 16 | counter` for v7, 100 ns ticks for v1/v6.
///
/// A take returns values above every value taken before and no lower than the clock's `now`:
/// when the clock has moved on, the values start at `now`; when it stands still or steps back,
/// they continue from the last one (the counter grows, and once it is used up the time field runs
/// ahead of the clock, as RFC 9562 §6.2 allows, until the clock catches up).
///
/// One compare-and-swap on one atomic per take: no lock. Aligned to 128 bytes so that the
/// atomic shares its cache lines with nothing else.
#[derive(Debug)]
#[repr(align(128))]
pub(crate) struct Sequence {
    last: AtomicU64,
    /// The largest value the UUID version can hold.
    max: u64,
}

impl Sequence {
    pub(crate) const fn new(max: u64) -> Self {
        Sequence {
            last: AtomicU64::new(0),
            max,
        }
    }

    /// Takes `n` (at least 1) consecutive values; returns the first.
    ///
    /// # Errors
    ///
    /// [`TimestampOverflow`] when the last of them would pass `max` (nothing is taken then).
    #[inline]
    pub(crate) fn take(&self, now: u64, n: u64, version: u8) -> Result<u64, TimestampOverflow> {
        debug_assert!(n >= 1);
        let mut first = 0;
        self.last
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |last| {
                first = last.checked_add(1)?.max(now);
                let end = first.checked_add(n - 1)?;
                (end <= self.max).then_some(end)
            })
            .map(|_| first)
            .map_err(|_| TimestampOverflow { version })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_follow_the_clock_and_never_repeat_or_go_back() {
        let sequence = Sequence::new(1_000);
        assert_eq!(sequence.take(100, 1, 7), Ok(100));
        assert_eq!(sequence.take(100, 1, 7), Ok(101), "clock stood still");
        assert_eq!(sequence.take(50, 3, 7), Ok(102), "clock stepped back");
        assert_eq!(sequence.take(50, 1, 7), Ok(105));
        assert_eq!(sequence.take(500, 1, 7), Ok(500), "clock moved on");
    }

    #[test]
    fn the_last_value_is_max_and_then_a_typed_error() {
        let sequence = Sequence::new(10);
        assert_eq!(sequence.take(9, 2, 7), Ok(9));
        assert_eq!(
            sequence.take(0, 1, 7),
            Err(TimestampOverflow { version: 7 })
        );
        assert_eq!(
            sequence.take(11, 1, 7),
            Err(TimestampOverflow { version: 7 })
        );
        let full = Sequence::new(u64::MAX);
        assert_eq!(full.take(u64::MAX, 1, 7), Ok(u64::MAX));
        assert_eq!(full.take(0, 1, 7), Err(TimestampOverflow { version: 7 }));
        assert_eq!(
            Sequence::new(u64::MAX).take(u64::MAX - 1, 3, 7),
            Err(TimestampOverflow { version: 7 }),
            "a batch that does not fit takes nothing"
        );
    }

    #[test]
    fn threads_share_one_increasing_sequence() {
        let sequence = Sequence::new(u64::MAX);
        let mut taken: Vec<u64> = std::thread::scope(|scope| {
            let workers: Vec<_> = (0..4)
                .map(|_| {
                    scope.spawn(|| {
                        let mut mine = Vec::new();
                        for _ in 0..10_000 {
                            let value = sequence.take(1, 1, 7).unwrap();
                            assert!(mine.last().is_none_or(|&last| value > last));
                            mine.push(value);
                        }
                        mine
                    })
                })
                .collect();
            workers
                .into_iter()
                .flat_map(|w| w.join().unwrap())
                .collect()
        });
        taken.sort_unstable();
        taken.dedup();
        assert_eq!(taken.len(), 40_000);
    }
}
