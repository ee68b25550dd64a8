//! [`RandomSource`]: where the random bits of a strategy come from.

use std::fmt;
use std::sync::Mutex;

use rand::distr::Distribution;
use rand::{Rng, RngCore};

/// Where a random strategy (random ids, UUIDs) draws its bits: each thread's own generator, or one
/// generator the caller gives (a seeded one, for reproducible tests).
///
/// ```
/// use gdid_engine::plumbing::RandomSource;
/// use rand::SeedableRng;
///
/// let fast = RandomSource::thread(); // rand::rng(): ChaCha, seeded from the OS, no lock
/// let _ = fast.next_u64();
///
/// let a = RandomSource::given(rand::rngs::StdRng::seed_from_u64(7));
/// let b = RandomSource::given(rand::rngs::StdRng::seed_from_u64(7));
/// assert_eq!(a.next_u64(), b.next_u64()); // the same seed, the same draws
/// ```
pub struct RandomSource(Source);

enum Source {
    /// `rand::rng()`: each thread's own generator (ChaCha12, seeded from the OS and reseeded).
    Thread,
    /// A generator given by the caller, behind a lock.
    Given(Mutex<Box<dyn RngCore + Send>>),
}

impl RandomSource {
    /// Each thread's own generator (`rand::rng()`): no lock, no shared state.
    pub const fn thread() -> Self {
        RandomSource(Source::Thread)
    }

    /// The generator `rng`, shared by every thread behind a lock (e.g. a seeded `StdRng`, for
    /// tests that must repeat).
    pub fn given(rng: impl RngCore + Send + 'static) -> Self {
        RandomSource(Source::Given(Mutex::new(Box::new(rng))))
    }

    /// 64 random bits.
    #[inline]
    pub fn next_u64(&self) -> u64 {
        match &self.0 {
            Source::Thread => rand::rng().next_u64(),
            Source::Given(rng) => lock(rng).next_u64(),
        }
    }

    /// 128 random bits, drawn under one borrow of the generator.
    #[inline]
    pub fn next_u128(&self) -> u128 {
        fn draw(rng: &mut (impl RngCore + ?Sized)) -> u128 {
            u128::from(rng.next_u64()) << 64 | u128::from(rng.next_u64())
        }
        match &self.0 {
            Source::Thread => draw(&mut rand::rng()),
            Source::Given(rng) => draw(&mut **lock(rng)),
        }
    }

    /// One value of `distribution` (e.g. a `rand::distr::Uniform`).
    #[inline]
    pub fn sample<T>(&self, distribution: &impl Distribution<T>) -> T {
        match &self.0 {
            Source::Thread => rand::rng().sample(distribution),
            Source::Given(rng) => lock(rng).sample(distribution),
        }
    }
}

fn lock(
    rng: &Mutex<Box<dyn RngCore + Send>>,
) -> std::sync::MutexGuard<'_, Box<dyn RngCore + Send>> {
    // A panic while drawing cannot leave a generator in a state that matters.
    rng.lock().unwrap_or_else(|e| e.into_inner())
}

impl Default for RandomSource {
    /// [`RandomSource::thread`].
    fn default() -> Self {
        RandomSource::thread()
    }
}

impl fmt::Debug for RandomSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self.0 {
            Source::Thread => "RandomSource::thread()",
            Source::Given(_) => "RandomSource::given(..)",
        })
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;
    use rand::rngs::StdRng;

    use super::*;

    #[test]
    fn a_given_generator_repeats_and_the_thread_one_varies() {
        let a = RandomSource::given(StdRng::seed_from_u64(1));
        let b = RandomSource::given(StdRng::seed_from_u64(1));
        for _ in 0..10 {
            assert_eq!(a.next_u128(), b.next_u128());
        }
        let thread = RandomSource::thread();
        let draws: std::collections::HashSet<u64> = (0..100).map(|_| thread.next_u64()).collect();
        assert_eq!(draws.len(), 100);
        assert_eq!(format!("{thread:?}"), "RandomSource::thread()");
    }
}
