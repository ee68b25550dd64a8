//! [`RandomIdGenerator`]: uniform random ids in an [`IdRange`], optionally with a Luhn check digit.

use std::collections::HashSet;

use gdid_engine::plumbing::RandomSource;
use gdid_engine::{Error, IdBatch, IdGenerator};
use rand::RngCore;
use rand::distr::Uniform;

use crate::luhn;
use crate::range::{IdRange, RangeError};

/// Uniform random `u64` ids in an [`IdRange`], drawn without modulo bias (rand's `Uniform`
/// rejects the few values that would skew the draw).
///
/// Random ids are *candidates*: two draws can collide, with the odds of the
/// [`birthday`](crate::birthday) arithmetic. Store them under a unique index and insert with
/// [`insert_with_retry`](crate::insert_with_retry), which draws again on a duplicate key.
///
/// ```
/// use gdid_engine::IdGenerator;
/// use gdid_random::{IdRange, RandomIdGenerator, luhn};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let accounts = RandomIdGenerator::new(IdRange::decimal_digits(12)?);
/// let id = accounts.next_id().await?;
/// assert_eq!(id.to_string().len(), 12);
///
/// // 16-digit card-like numbers: 15 random digits and a Luhn check digit.
/// let cards = RandomIdGenerator::luhn_numbers(16)?;
/// let card = cards.next_id().await?;
/// assert!(luhn::parse(&card.to_string()).is_ok());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
pub struct RandomIdGenerator {
    range: IdRange,
    uniform: Uniform<u64>,
    luhn: bool,
    source: RandomSource,
}

impl RandomIdGenerator {
    /// Ids drawn from `range` with each thread's own generator.
    pub fn new(range: IdRange) -> Self {
        let bounds = range.bounds();
        RandomIdGenerator {
            range,
            // `IdRange` is never empty, so this cannot fail.
            uniform: Uniform::new(bounds.start, bounds.end).unwrap_or_else(|_| unreachable!()),
            luhn: false,
            source: RandomSource::thread(),
        }
    }

    /// Ids drawn from `range` with `rng` (e.g. a seeded `StdRng`, for reproducible tests).
    pub fn with_rng(range: IdRange, rng: impl RngCore + Send + 'static) -> Self {
        RandomIdGenerator {
            source: RandomSource::given(rng),
            ..Self::new(range)
        }
    }

    /// Numbers of exactly `digits` digits (2 to 19) whose last digit is the Luhn check digit
    /// of the others.
    ///
    /// # Errors
    ///
    /// [`RangeError`] for fewer than 2 or more than 19 digits.
    pub fn luhn_numbers(digits: u32) -> Result<Self, RangeError> {
        if digits < 2 {
            return Err(RangeError(format!(
                "{digits} digits: a Luhn number has a body and a check digit"
            )));
        }
        Self::new(IdRange::decimal_digits(digits - 1)?).with_luhn()
    }

    /// Appends a Luhn check digit to every id: the range is that of the bodies, and ids are
    /// `body · 10 + check digit`.
    ///
    /// # Errors
    ///
    /// [`RangeError`] when the largest body times 10 passes `u64::MAX`.
    pub fn with_luhn(mut self) -> Result<Self, RangeError> {
        let last = self.range.bounds().end - 1;
        if luhn::with_check_digit(last).is_none() {
            return Err(RangeError(format!(
                "bodies up to {last} with a check digit pass u64::MAX"
            )));
        }
        self.luhn = true;
        Ok(self)
    }

    /// The range ids (or, with a check digit, their bodies) are drawn from.
    pub fn range(&self) -> IdRange {
        self.range
    }

    /// How many distinct ids this generator can give.
    pub fn id_space(&self) -> u64 {
        self.range.size()
    }

    /// One id.
    pub fn draw(&self) -> u64 {
        let body = self.source.sample(&self.uniform);
        if self.luhn {
            // Checked in `with_luhn`.
            luhn::with_check_digit(body).unwrap_or(body)
        } else {
            body
        }
    }
}

impl IdGenerator for RandomIdGenerator {
    type Id = u64;

    async fn next_id(&self) -> Result<u64, Error> {
        Ok(self.draw())
    }

    /// `n` distinct ids (distinct within the batch; across batches only a unique index can
    /// tell).
    async fn next_ids(&self, n: u64) -> Result<IdBatch<u64>, Error> {
        if n == 0 || n > self.id_space() / 2 {
            return Err(Error::invalid_count(
                n,
                "ask for at least one id, and at most half the id space",
            ));
        }
        let mut seen = HashSet::new();
        let mut ids = Vec::new();
        while u64::try_from(ids.len()).unwrap_or(u64::MAX) < n {
            let id = self.draw();
            if seen.insert(id) {
                ids.push(id);
            }
        }
        Ok(IdBatch::singles(ids))
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;

    #[test]
    fn draws_stay_in_range_and_cover_it_evenly() {
        let ids =
            RandomIdGenerator::with_rng(IdRange::new(10..20).unwrap(), StdRng::seed_from_u64(7));
        let mut counts = [0u32; 10];
        for _ in 0..100_000 {
            let id = ids.draw();
            assert!((10..20).contains(&id), "{id}");
            counts[usize::try_from(id - 10).unwrap()] += 1;
        }
        // 10,000 expected per value; 5 standard deviations is about ±475.
        for (value, count) in counts.iter().enumerate() {
            assert!((9_500..=10_500).contains(count), "{value}: {count}");
        }
    }

    #[test]
    fn seeded_generators_repeat_and_luhn_numbers_check() {
        let a = RandomIdGenerator::with_rng(
            IdRange::decimal_digits(12).unwrap(),
            StdRng::seed_from_u64(1),
        );
        let b = RandomIdGenerator::with_rng(
            IdRange::decimal_digits(12).unwrap(),
            StdRng::seed_from_u64(1),
        );
        assert_eq!(a.draw(), b.draw());
        let cards = RandomIdGenerator::luhn_numbers(16).unwrap();
        for _ in 0..1_000 {
            let card = cards.draw();
            assert_eq!(card.to_string().len(), 16);
            assert_eq!(luhn::validate(card), Ok(card));
        }
        assert!(RandomIdGenerator::luhn_numbers(1).is_err());
        assert!(RandomIdGenerator::luhn_numbers(19).is_ok());
        assert!(
            RandomIdGenerator::luhn_numbers(20).is_err(),
            "19-digit bodies times 10 pass u64::MAX"
        );
    }

    #[tokio::test]
    async fn a_batch_holds_distinct_ids() {
        let ids = RandomIdGenerator::new(IdRange::new(0..100).unwrap());
        let batch = ids.next_ids(50).await.unwrap();
        let distinct: HashSet<u64> = batch.iter().collect();
        assert_eq!(distinct.len(), 50);
        assert!(ids.next_ids(51).await.is_err());
        assert!(ids.next_ids(0).await.is_err());
    }
}
