//! # gdid-random
//!
//! Random ids in a range, the strategy of account and card numbers: ids that reveal nothing
//! about order or volume, of a fixed number of digits, optionally with a Luhn check digit, made
//! unique by the store's unique index and a retry on duplicate key.
//!
//! - [`RandomIdGenerator`]: uniform ids in an [`IdRange`] (exactly N digits, N bits, any range),
//!   no modulo bias, each thread's generator or one given (seeded for tests); implements
//!   `gdid_engine::IdGenerator`.
//! - [`luhn`]: the check digit, and parsing that validates it.
//! - [`insert_with_retry`]: draw, insert, draw again on a duplicate key, up to a bound.
//! - [`birthday`]: the collision arithmetic, to choose the range.
//!
//! Pick a range 10× to 100× larger than the records it will ever hold: at 10% full an insert
//! needs 1.1 attempts on average, at 50% two.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(missing_docs, missing_debug_implementations)]

pub mod birthday;
mod generator;
pub mod luhn;
mod range;
mod retry;

pub use generator::RandomIdGenerator;
pub use range::{IdRange, RangeError};
pub use retry::{RetryError, insert_with_retry};
