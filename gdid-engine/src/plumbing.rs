//! What the workspace's crates share and an application rarely names: a store URL made fit to
//! print ([`redact`], used by every crate that prints a URL), and the random source of the
//! strategies that draw their ids ([`RandomSource`], gdid-random and gdid-uuid).

mod random;
mod redact;

pub use random::RandomSource;
pub use redact::redact;
