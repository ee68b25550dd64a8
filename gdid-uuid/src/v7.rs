//! [`UuidV7Generator`]: time-ordered UUIDs (RFC 9562 version 7), strictly increasing, lock-free.

use gdid_engine::plumbing::RandomSource;
use gdid_engine::{Error, IdBatch, IdGenerator};
use rand::RngCore;
use uuid::Uuid;

use crate::clock::{Clock, SystemClock};
use crate::error::{TimestampOverflow, check_count};
use crate::sequence::Sequence;

/// Bits of the counter under the millisecond in the sequence value (`ms << 15 | counter`): 32,768
/// ids per millisecond before the time field runs ahead, and the value stays below `u64::MAX / 2`.
const COUNTER_BITS: u32 = 15;
/// The last millisecond a v7 UUID can hold (48 bits: the year 10889).
const MAX_MILLIS: u64 = (1 << 48) - 1;
/// The last sequence value: the last millisecond, the last counter.
const MAX_VALUE: u64 = (MAX_MILLIS << COUNTER_BITS) | ((1 << COUNTER_BITS) - 1);

/// Version 7 UUIDs: 48 bits of Unix milliseconds, then a 15-bit counter, then 59 random bits.
///
/// ```text
///  0                   1                   2                   3
///  0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1 2 3 4 5 6 7 8 9 0 1
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                        unix_ts_ms (32)                        |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |       unix_ts_ms (16)         |  ver  |  counter, high 12     |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |var|ctr 3|                   random (27)                       |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// |                          random (32)                          |
/// +-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+-+
/// ```
///
/// **Strictly increasing** for every id of one generator (and its `&`/`Arc` handles), from any
/// thread: time and counter live in one atomic (`ms << 15 | counter`), advanced by one atomic
/// read-modify-write per id; there is no lock. When the clock moves on, the counter starts again at
/// 0; when it stands still or steps back, the counter goes on from the last id, and after 32,768
/// ids in one millisecond the time field runs ahead of the clock until the clock catches up (RFC
/// 9562 §6.2, method 1 with timestamp increment). [`UuidV7Generator::process_wide`] is one
/// generator for the whole process, like `Uuid::now_v7()`.
///
/// The 59 random bits per id (each thread's own generator by default) keep ids of different
/// processes apart: two processes that hit the same millisecond and counter collide with odds of
/// 2^-59.
///
/// ```
/// use gdid_uuid::UuidV7Generator;
///
/// # fn main() -> Result<(), gdid_uuid::TimestampOverflow> {
/// let ids = UuidV7Generator::new();
/// let first = ids.generate()?;
/// let second = ids.generate()?;
/// assert!(first < second);
/// assert_eq!(first.get_version_num(), 7);
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct UuidV7Generator<C = SystemClock> {
    sequence: Sequence,
    clock: C,
    random: RandomSource,
}

impl UuidV7Generator {
    /// A generator on the system clock with each thread's random generator.
    pub const fn new() -> Self {
        UuidV7Generator {
            sequence: Sequence::new(MAX_VALUE),
            clock: SystemClock,
            random: RandomSource::thread(),
        }
    }

    /// The one generator of this process: every id it gives, from any thread or task, is greater
    /// than the ones before.
    ///
    /// ```
    /// use gdid_uuid::UuidV7Generator;
    ///
    /// let a = UuidV7Generator::process_wide().generate().unwrap();
    /// let b = UuidV7Generator::process_wide().generate().unwrap();
    /// assert!(a < b);
    /// ```
    pub fn process_wide() -> &'static UuidV7Generator {
        static PROCESS_WIDE: UuidV7Generator = UuidV7Generator::new();
        &PROCESS_WIDE
    }
}

impl Default for UuidV7Generator {
    fn default() -> Self {
        UuidV7Generator::new()
    }
}

impl<C: Clock> UuidV7Generator<C> {
    /// A generator that reads the time from `clock` (a [`ManualClock`](crate::ManualClock) in
    /// tests).
    pub fn with_clock(clock: C) -> Self {
        UuidV7Generator {
            sequence: Sequence::new(MAX_VALUE),
            clock,
            random: RandomSource::thread(),
        }
    }

    /// Draws the random bits from `rng` (e.g. a seeded `StdRng`, for tests that repeat), shared
    /// by every thread behind a lock, instead of each thread's own generator.
    #[must_use]
    pub fn with_rng(self, rng: impl RngCore + Send + 'static) -> Self {
        UuidV7Generator {
            random: RandomSource::given(rng),
            ..self
        }
    }

    /// One UUID, greater than every one this generator gave before.
    ///
    /// # Errors
    ///
    /// [`TimestampOverflow`] when the clock reads past the year 10889.
    #[inline]
    pub fn generate(&self) -> Result<Uuid, TimestampOverflow> {
        let first = self.sequence.take(self.now()?, 1, 7)?;
        Ok(self.encode(first))
    }

    /// The clock as a sequence value: the millisecond, counter 0.
    #[inline]
    fn now(&self) -> Result<u64, TimestampOverflow> {
        let now = self.clock.now();
        now.as_secs()
            .checked_mul(1_000)
            .and_then(|ms| ms.checked_add(u64::from(now.subsec_millis())))
            .filter(|&ms| ms <= MAX_MILLIS)
            .map(|ms| ms << COUNTER_BITS)
            .ok_or(TimestampOverflow { version: 7 })
    }

    /// The UUID of one sequence value, with fresh random bits.
    #[inline]
    fn encode(&self, value: u64) -> Uuid {
        let millis = value >> COUNTER_BITS;
        let counter = value & ((1 << COUNTER_BITS) - 1);
        // ms (48) | version 7 (4) | counter's high 12 bits
        let high = millis << 16 | 0x7000 | counter >> 3;
        // variant 0b10 (2) | counter's low 3 bits | 59 random bits
        let low = 1 << 63 | (counter & 0b111) << 59 | self.random.next_u64() >> 5;
        Uuid::from_u64_pair(high, low)
    }
}

impl<C: Clock> IdGenerator for UuidV7Generator<C> {
    type Id = Uuid;

    async fn next_id(&self) -> Result<Uuid, Error> {
        Ok(self.generate()?)
    }

    /// `n` UUIDs (1 to [`MAX_BATCH`](crate::MAX_BATCH)) in increasing order, taken from the
    /// sequence in one step.
    async fn next_ids(&self, n: u64) -> Result<IdBatch<Uuid>, Error> {
        check_count(n)?;
        let first = self.sequence.take(self.now()?, n, 7)?;
        Ok(IdBatch::singles(
            (first..=first + (n - 1)).map(|value| self.encode(value)),
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use uuid::{Variant, Version};

    use super::*;
    use crate::clock::ManualClock;

    const NOW: Duration = Duration::from_millis(1_700_000_000_123);

    fn millis(id: Uuid) -> u64 {
        let (seconds, nanos) = id.get_timestamp().unwrap().to_unix();
        seconds * 1_000 + u64::from(nanos) / 1_000_000
    }

    #[test]
    fn fields_are_where_rfc_9562_puts_them() {
        let ids = UuidV7Generator::with_clock(ManualClock::new(NOW)).with_rng(ZeroRng);
        for k in 0..20u64 {
            let id = ids.generate().unwrap();
            assert_eq!(id.get_version(), Some(Version::SortRand));
            assert_eq!(id.get_variant(), Variant::RFC4122);
            assert_eq!(millis(id), 1_700_000_000_123);
            // The counter: rand_a (12 bits), then the 3 bits after the variant; no random bits.
            let expected = u128::from(1_700_000_000_123_u64) << 80
                | 0x7 << 76
                | u128::from(k >> 3) << 64
                | 0b10 << 62
                | u128::from(k & 0b111) << 59;
            assert_eq!(id.as_u128(), expected, "id {k}");
        }
    }

    /// A generator of zero bits only: the random part of an id is then 0.
    struct ZeroRng;

    impl rand::RngCore for ZeroRng {
        fn next_u32(&mut self) -> u32 {
            0
        }
        fn next_u64(&mut self) -> u64 {
            0
        }
        fn fill_bytes(&mut self, dest: &mut [u8]) {
            dest.fill(0);
        }
    }

    #[test]
    fn a_clock_at_the_end_of_durations_is_an_error_not_a_wrapped_time() {
        let clock = ManualClock::new(Duration::new(u64::MAX / 1_000, 999_999_999));
        let ids = UuidV7Generator::with_clock(clock);
        assert_eq!(ids.generate(), Err(TimestampOverflow { version: 7 }));
    }

    #[test]
    fn the_counter_restarts_with_each_millisecond_and_carries_into_it_when_used_up() {
        let clock = ManualClock::new(NOW);
        let ids = UuidV7Generator::with_clock(clock.clone());
        let first = ids.generate().unwrap();
        assert_eq!(first.as_u64_pair().0 & 0x0fff, 0, "counter 0");
        let mut last = first;
        for _ in 1..32_768 {
            let id = ids.generate().unwrap();
            assert!(id > last);
            assert_eq!(millis(id), 1_700_000_000_123);
            last = id;
        }
        let carried = ids.generate().unwrap();
        assert_eq!(millis(carried), 1_700_000_000_124, "ran ahead by one ms");
        clock.advance(Duration::from_millis(10));
        let moved_on = ids.generate().unwrap();
        assert_eq!(millis(moved_on), 1_700_000_000_133);
        assert_eq!(moved_on.as_u64_pair().0 & 0x0fff, 0, "counter 0 again");
    }

    #[test]
    fn past_the_year_10889_is_an_error_not_a_wrong_id() {
        let clock = ManualClock::new(Duration::from_millis(MAX_MILLIS));
        let ids = UuidV7Generator::with_clock(clock.clone());
        assert_eq!(millis(ids.generate().unwrap()), MAX_MILLIS);
        clock.set(Duration::from_millis(MAX_MILLIS + 1));
        assert_eq!(ids.generate(), Err(TimestampOverflow { version: 7 }));
    }
}
