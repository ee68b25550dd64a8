//! Test doubles for code built on the engine (feature `testing`): an authority that fails,
//! stalls or hangs on command ([`FaultyAuthority`]), and one that refuses every request with
//! the error it is given ([`Refusing`]).
//!
//! ```
//! use std::time::Duration;
//!
//! use gdid_engine::testing::FaultyAuthority;
//! use gdid_engine::{BlockGenerator, MemoryAuthority};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let flaky = FaultyAuthority::new(MemoryAuthority::new(1));
//! flaky.set_down(true);
//! let ids = BlockGenerator::builder("shop", "orders")
//!     .authority(flaky)
//!     .request_timeout(Duration::from_millis(200))
//!     .build()
//!     .unwrap();
//! assert!(ids.next_id().await.is_err()); // the only authority is down
//! # }
//! ```

pub use crate::faults::{Faults, FaultyAuthority, InjectedFault, Latency};
pub use crate::refusing::Refusing;
