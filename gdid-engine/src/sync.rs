//! The synchronisation primitives of the block generator's hand-off between the shared block and
//! the threads' slices: std's in ordinary builds, loom's under `RUSTFLAGS="--cfg gdid_loom"`, so
//! that the model checker runs the real code (`gdid-engine/loom/tests/loom_block_handoff.rs`).
//!
//! Only what the hand-off uses is here: the atomics of [`Segment`](crate::segment::Segment) and
//! [`Slot`](crate::segment::Slot) and the generator's state lock. The current segment and the
//! per-thread slots built on them are in [`per_thread`](crate::per_thread).

#[cfg(not(gdid_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, fence};
#[cfg(not(gdid_loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

#[cfg(gdid_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, fence};
#[cfg(gdid_loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};
