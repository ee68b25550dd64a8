//! [`UuidV4Generator`]: random UUIDs (RFC 9562 version 4).

use gdid_engine::plumbing::RandomSource;
use gdid_engine::{Error, IdBatch, IdGenerator};
use rand::RngCore;
use uuid::Uuid;

use crate::error::check_count;

/// Version 4 UUIDs: 122 random bits, from each thread's own generator (ChaCha12, seeded from the
/// OS) or one you give ([`UuidV4Generator::with_rng`]). No order, no clock, no shared state.
///
/// ```
/// use gdid_uuid::UuidV4Generator;
///
/// let ids = UuidV4Generator::new();
/// let id = ids.generate();
/// assert_eq!(id.get_version_num(), 4);
/// assert_ne!(id, ids.generate());
/// ```
#[derive(Debug, Default)]
pub struct UuidV4Generator {
    random: RandomSource,
}

impl UuidV4Generator {
    /// A generator on each thread's random generator.
    pub const fn new() -> Self {
        UuidV4Generator {
            random: RandomSource::thread(),
        }
    }

    /// Draws from `rng` (e.g. a seeded `StdRng`, for tests that repeat), shared by every thread
    /// behind a lock, instead of each thread's own generator.
    #[must_use]
    pub fn with_rng(self, rng: impl RngCore + Send + 'static) -> Self {
        UuidV4Generator {
            random: RandomSource::given(rng),
        }
    }

    /// One UUID.
    #[inline]
    pub fn generate(&self) -> Uuid {
        uuid::Builder::from_random_bytes(self.random.next_u128().to_be_bytes()).into_uuid()
    }
}

impl IdGenerator for UuidV4Generator {
    type Id = Uuid;

    async fn next_id(&self) -> Result<Uuid, Error> {
        Ok(self.generate())
    }

    /// `n` UUIDs (1 to [`MAX_BATCH`](crate::MAX_BATCH)).
    async fn next_ids(&self, n: u64) -> Result<IdBatch<Uuid>, Error> {
        check_count(n)?;
        Ok(IdBatch::singles((0..n).map(|_| self.generate())))
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;
    use uuid::{Variant, Version};

    use super::*;

    #[test]
    fn version_and_variant_bits_are_set_and_the_rest_is_the_rng() {
        let seeded = || UuidV4Generator::new().with_rng(StdRng::seed_from_u64(3));
        let (a, b) = (seeded(), seeded());
        for _ in 0..100 {
            let id = a.generate();
            assert_eq!(id, b.generate());
            assert_eq!(id.get_version(), Some(Version::Random));
            assert_eq!(id.get_variant(), Variant::RFC4122);
        }
        // Each of the 122 random bits is set in some of 1,000 ids and clear in others.
        let ids = UuidV4Generator::new();
        let (mut ones, mut zeros) = (0u128, 0u128);
        for _ in 0..1_000 {
            let bits = ids.generate().as_u128();
            ones |= bits;
            zeros |= !bits;
        }
        let fixed = 0xf << 76 | 0b11 << 62; // version and variant
        assert_eq!(ones & zeros, !fixed);
    }
}
