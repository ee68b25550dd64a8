//! What the workspace's crates share and an application rarely names: a store URL made fit to
//! print ([`redact`], used by every crate that prints a URL), the one list of store URL schemes
//! ([`scheme`], read by gdid-sql and the `gdid` crate), and the random source of the strategies
//! that draw their ids ([`RandomSource`], gdid-random and gdid-uuid).

mod random;
mod redact;
pub mod scheme;

pub use random::RandomSource;
pub use redact::redact;
