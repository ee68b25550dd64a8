//! [`Refusing`]: an authority that refuses every request with the error it is given.

use std::sync::atomic::{AtomicU64, Ordering};

use super::authority::{Authority, Block};
use super::error::AuthorityError;

/// An authority (number 1) that answers every allocation with the error `refusal` makes,
/// counting the calls: what a generator, a server or a command does about each refusal.
///
/// ```
/// use gdid_engine::testing::Refusing;
/// use gdid_engine::{Authority, AuthorityError, Recourse};
///
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// let exhausted = Refusing::new(|| AuthorityError::Exhausted);
/// let refused = exhausted.allocate("shop", "orders", 10).await.unwrap_err();
/// assert_eq!(refused.recourse(), Recourse::Repair);
/// assert_eq!(exhausted.calls(), 1);
/// # }
/// ```
#[derive(Debug)]
pub struct Refusing {
    refusal: fn() -> AuthorityError,
    calls: AtomicU64,
}

impl Refusing {
    /// An authority refusing with what `refusal` makes (made afresh for each call).
    pub fn new(refusal: fn() -> AuthorityError) -> Self {
        Refusing {
            refusal,
            calls: AtomicU64::new(0),
        }
    }

    /// How many allocations were asked of it.
    pub fn calls(&self) -> u64 {
        self.calls.load(Ordering::Relaxed)
    }
}

impl Authority for Refusing {
    fn number(&self) -> u8 {
        1
    }

    fn label(&self) -> String {
        "refusing".into()
    }

    async fn allocate(&self, _: &str, _: &str, _: u64) -> Result<Block, AuthorityError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Err((self.refusal)())
    }
}
