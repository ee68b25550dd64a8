//! [`FaultyAuthority`]: wraps any authority and injects latency, failures, outages and hangs.

use std::fmt;
use std::ops::Range;
use std::sync::Mutex;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::time::Instant;

use super::authority::{Authority, Block};
use super::error::AuthorityError;

/// How long each allocation takes before it reaches the wrapped authority.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Latency {
    /// No added latency.
    None,
    /// The same latency every time.
    Fixed(Duration),
    /// Uniform between the two bounds.
    Uniform(Duration, Duration),
}

/// The faults a [`FaultyAuthority`] injects; change them at any time with
/// [`FaultyAuthority::set_faults`] or the `set_*` shortcuts.
#[derive(Debug, Clone, PartialEq)]
pub struct Faults {
    /// Added latency.
    pub latency: Latency,
    /// Probability in `0.0..=1.0` that an allocation fails before reaching the store.
    pub failure_rate: f64,
    /// Probability that the store allocates but the reply is lost (the block is never used: a
    /// gap, as after a crash).
    pub lost_reply_rate: f64,
    /// Time windows, counted from the wrapper's creation, during which every allocation fails.
    pub outages: Vec<Range<Duration>>,
    /// Down until set otherwise: every allocation fails.
    pub down: bool,
    /// Every allocation hangs, never answering.
    pub hang: bool,
}

impl Default for Faults {
    fn default() -> Self {
        Faults {
            latency: Latency::None,
            failure_rate: 0.0,
            lost_reply_rate: 0.0,
            outages: Vec::new(),
            down: false,
            hang: false,
        }
    }
}

/// The error a [`FaultyAuthority`] injects.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("injected fault: {0}")]
pub struct InjectedFault(pub &'static str);

/// Wraps any authority and injects faults: fixed or random latency, a failure rate, lost
/// replies, outage windows, a manual down switch, and hangs. Time is tokio's, so tests with a
/// paused clock run an hour-long outage in milliseconds.
///
/// ```
/// use gdid_engine::{Authority, MemoryAuthority, testing::{FaultyAuthority, Latency}};
/// use std::time::Duration;
///
/// # #[tokio::main(flavor = "current_thread", start_paused = true)]
/// # async fn main() {
/// let flaky = FaultyAuthority::new(MemoryAuthority::new(1))
///     .latency(Latency::Fixed(Duration::from_millis(30)))
///     .outage(Duration::from_secs(10)..Duration::from_secs(20));
/// assert!(flaky.allocate("a", "b", 10).await.is_ok());
/// tokio::time::sleep(Duration::from_secs(12)).await;
/// assert!(flaky.allocate("a", "b", 10).await.is_err());
/// # }
/// ```
pub struct FaultyAuthority<A> {
    inner: A,
    faults: Mutex<Faults>,
    rng: Mutex<StdRng>,
    created: Instant,
    attempts: std::sync::atomic::AtomicU64,
}

impl<A> FaultyAuthority<A> {
    /// Wraps `inner` with no faults yet.
    pub fn new(inner: A) -> Self {
        FaultyAuthority {
            inner,
            faults: Mutex::new(Faults::default()),
            rng: Mutex::new(StdRng::seed_from_u64(0x6d1d)),
            created: Instant::now(),
            attempts: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// How many allocations were asked of it so far, those under way included.
    pub fn attempts(&self) -> u64 {
        self.attempts.load(std::sync::atomic::Ordering::Acquire)
    }

    /// The wrapped authority.
    pub fn inner(&self) -> &A {
        &self.inner
    }

    /// Seeds the random choices (latency, failures), for reproducible runs.
    pub fn seed(self, seed: u64) -> Self {
        *self.rng.lock().unwrap_or_else(|e| e.into_inner()) = StdRng::seed_from_u64(seed);
        self
    }

    /// Sets the added latency.
    pub fn latency(self, latency: Latency) -> Self {
        self.update(|f| f.latency = latency);
        self
    }

    /// Sets the probability of a failure before the store is reached.
    pub fn failure_rate(self, rate: f64) -> Self {
        self.update(|f| f.failure_rate = rate);
        self
    }

    /// Sets the probability that a reply is lost after the store allocated.
    pub fn lost_reply_rate(self, rate: f64) -> Self {
        self.update(|f| f.lost_reply_rate = rate);
        self
    }

    /// Adds an outage window, counted from the wrapper's creation.
    pub fn outage(self, window: Range<Duration>) -> Self {
        self.update(|f| f.outages.push(window));
        self
    }

    /// Replaces every fault at once.
    pub fn set_faults(&self, faults: Faults) {
        self.update(|f| *f = faults);
    }

    /// Switches the authority down (every allocation fails) or back up.
    pub fn set_down(&self, down: bool) {
        self.update(|f| f.down = down);
    }

    /// Makes every allocation hang (never answer), or answer again.
    pub fn set_hang(&self, hang: bool) {
        self.update(|f| f.hang = hang);
    }

    /// Sets the added latency.
    pub fn set_latency(&self, latency: Latency) {
        self.update(|f| f.latency = latency);
    }

    fn update(&self, change: impl FnOnce(&mut Faults)) {
        change(&mut self.faults.lock().unwrap_or_else(|e| e.into_inner()));
    }

    fn snapshot(&self) -> Faults {
        self.faults
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn chance(&self, rate: f64) -> bool {
        rate > 0.0
            && self
                .rng
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .random_bool(rate.min(1.0))
    }

    fn delay(&self, latency: Latency) -> Duration {
        match latency {
            Latency::None => Duration::ZERO,
            Latency::Fixed(d) => d,
            Latency::Uniform(lo, hi) if hi > lo => self
                .rng
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .random_range(lo..=hi),
            Latency::Uniform(lo, _) => lo,
        }
    }

    fn in_outage(&self, faults: &Faults) -> bool {
        let since = self.created.elapsed();
        faults.down || faults.outages.iter().any(|w| w.contains(&since))
    }
}

impl<A: fmt::Debug> fmt::Debug for FaultyAuthority<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FaultyAuthority")
            .field("inner", &self.inner)
            .field("faults", &self.snapshot())
            .finish()
    }
}

impl<A: Authority> Authority for FaultyAuthority<A> {
    fn number(&self) -> u8 {
        self.inner.number()
    }

    fn label(&self) -> String {
        format!("faulty {}", self.inner.label())
    }

    async fn allocate(
        &self,
        scope: &str,
        sequence: &str,
        size: u64,
    ) -> Result<Block, AuthorityError> {
        self.attempts
            .fetch_add(1, std::sync::atomic::Ordering::AcqRel);
        let faults = self.snapshot();
        if faults.hang {
            std::future::pending::<()>().await;
        }
        let delay = self.delay(faults.latency);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        // Outages are judged when the request reaches the store, after the latency.
        if self.in_outage(&self.snapshot()) {
            return Err(AuthorityError::store(InjectedFault("the store is down")));
        }
        if self.chance(faults.failure_rate) {
            return Err(AuthorityError::store(InjectedFault("connection reset")));
        }
        let block = self.inner.allocate(scope, sequence, size).await?;
        if self.chance(faults.lost_reply_rate) {
            return Err(AuthorityError::store(InjectedFault(
                "reply lost after the store allocated",
            )));
        }
        Ok(block)
    }

    /// Forwarded to the inner authority unless the store is down (then an error: the ids are
    /// lost, never repeated).
    async fn give_back(
        &self,
        scope: &str,
        sequence: &str,
        tail: Block,
    ) -> Result<bool, AuthorityError> {
        if self.in_outage(&self.snapshot()) {
            return Err(AuthorityError::store(InjectedFault("the store is down")));
        }
        self.inner.give_back(scope, sequence, tail).await
    }
}
