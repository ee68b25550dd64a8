//! [`Clock`]: where the time-based generators read the time, so that tests can set it.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The wall clock of the time-based generators (v7, v1, v6), as time since the Unix epoch.
///
/// [`SystemClock`] is the default; [`ManualClock`] is set by hand, to test what happens when the
/// clock stands still or steps back.
pub trait Clock: Send + Sync {
    /// The time since the Unix epoch (1970-01-01 00:00:00 UTC).
    fn now(&self) -> Duration;
}

/// The system's wall clock (`SystemTime::now()`); a time before 1970 reads as the epoch itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SystemClock;

impl Clock for SystemClock {
    #[inline]
    fn now(&self) -> Duration {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or(Duration::ZERO)
    }
}

/// A clock that moves only when told to; clones share the same time.
///
/// ```
/// use std::time::Duration;
/// use gdid_uuid::{Clock, ManualClock};
///
/// let clock = ManualClock::new(Duration::from_secs(1_700_000_000));
/// let handle = clock.clone();
/// handle.advance(Duration::from_millis(5));
/// assert_eq!(clock.now(), Duration::from_millis(1_700_000_000_005));
/// handle.set(Duration::from_secs(1_600_000_000)); // a step back
/// assert_eq!(clock.now(), Duration::from_secs(1_600_000_000));
/// ```
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    now: Arc<Mutex<Duration>>,
}

impl ManualClock {
    /// A clock that reads `since_epoch`.
    pub fn new(since_epoch: Duration) -> Self {
        ManualClock {
            now: Arc::new(Mutex::new(since_epoch)),
        }
    }

    /// Sets the time, forwards or backwards.
    pub fn set(&self, since_epoch: Duration) {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner) = since_epoch;
    }

    /// Moves the time forwards by `by` (saturating).
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(PoisonError::into_inner);
        *now = now.saturating_add(by);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        *self.now.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl<C: Clock + ?Sized> Clock for &C {
    fn now(&self) -> Duration {
        (**self).now()
    }
}

impl<C: Clock + ?Sized> Clock for Arc<C> {
    fn now(&self) -> Duration {
        (**self).now()
    }
}
