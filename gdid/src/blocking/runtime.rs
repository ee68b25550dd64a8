//! The small tokio runtime a blocking store owns, and how blocking calls wait on it.
//!
//! The runtime has one worker thread of its own (`gdid-blocking`): it runs the background work
//! (block prefetches, allocation retries, pool upkeep) and drives the timers and sockets, so
//! that all of it goes on between calls. A call runs its future on the caller's thread, with
//! the runtime entered (what the future spawns goes to the runtime) and the thread parked while
//! the future waits. Nothing here uses tokio's `block_on`: a call works inside another runtime
//! too (it blocks that runtime's thread while it waits, as any blocking call does).

use std::cell::Cell;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};
use std::time::Duration;

/// The name of the runtime's threads (at most 15 bytes: Linux shows no more).
pub(crate) const THREAD_NAME: &str = "gdid-blocking";

/// How long dropping the last handle waits for the runtime's blocking tasks to stop.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);

thread_local! {
    /// Whether this thread is one of a blocking store's runtime threads.
    static ON_RUNTIME_THREAD: Cell<bool> = const { Cell::new(false) };
    /// This thread's waker: it unparks the thread.
    static THREAD_WAKER: Waker = Waker::from(Arc::new(Unpark(thread::current())));
}

/// Wakes a thread parked in [`Runtime::block_on`].
struct Unpark(Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// A runtime shared by a blocking store and everything it hands out; shut down when the last of
/// them is dropped.
#[derive(Debug)]
pub(crate) struct Runtime {
    handle: tokio::runtime::Handle,
    runtime: Option<tokio::runtime::Runtime>,
}

impl Runtime {
    /// A runtime with one worker thread.
    pub(crate) fn start() -> std::io::Result<Arc<Runtime>> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .max_blocking_threads(4)
            .thread_name(THREAD_NAME)
            .on_thread_start(|| ON_RUNTIME_THREAD.with(|on| on.set(true)))
            .enable_all()
            .build()?;
        Ok(Arc::new(Runtime {
            handle: runtime.handle().clone(),
            runtime: Some(runtime),
        }))
    }

    /// Runs `future` to completion on this thread, with the runtime entered; parks the thread
    /// while the future waits.
    ///
    /// # Panics
    ///
    /// On one of a blocking store's runtime threads (the call would wait for the thread it
    /// blocks); when `future` panics.
    pub(crate) fn block_on<F: Future>(&self, future: F) -> F::Output {
        assert!(
            !ON_RUNTIME_THREAD.with(Cell::get),
            "a gdid::blocking call on a thread of a blocking store's own runtime would wait for \
             itself: use the async API (`gdid::Store`) there"
        );
        let _entered = self.handle.enter();
        let mut future = pin!(future);
        THREAD_WAKER.with(|waker| {
            let mut cx = Context::from_waker(waker);
            loop {
                if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                    return output;
                }
                // A wake before this park makes it return at once; a spurious return polls
                // again.
                thread::park();
            }
        })
    }

    /// Runs `f` with the runtime entered: what it drops or spawns finds the runtime.
    pub(crate) fn enter<T>(&self, f: impl FnOnce() -> T) -> T {
        let _entered = self.handle.enter();
        f()
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        let Some(runtime) = self.runtime.take() else {
            return;
        };
        // Waiting is not allowed in an async context (tokio panics): there the threads are told
        // to stop and end on their own, a moment later.
        if tokio::runtime::Handle::try_current().is_ok() || ON_RUNTIME_THREAD.with(Cell::get) {
            runtime.shutdown_background();
        } else {
            runtime.shutdown_timeout(SHUTDOWN_TIMEOUT);
        }
    }
}

/// A value whose drop must find its runtime (a pool's or a client's may spawn a task on the
/// way out), and keeps it alive until then.
#[derive(Debug)]
pub(crate) struct InRuntime<T> {
    value: Option<T>,
    runtime: Arc<Runtime>,
}

impl<T> InRuntime<T> {
    pub(crate) fn new(value: T, runtime: Arc<Runtime>) -> Self {
        InRuntime {
            value: Some(value),
            runtime,
        }
    }

    pub(crate) fn get(&self) -> &T {
        self.value.as_ref().expect("present until dropped")
    }

    pub(crate) fn runtime(&self) -> &Arc<Runtime> {
        &self.runtime
    }
}

impl<T: Clone> Clone for InRuntime<T> {
    fn clone(&self) -> Self {
        InRuntime::new(self.get().clone(), self.runtime.clone())
    }
}

impl<T> Drop for InRuntime<T> {
    fn drop(&mut self) {
        let value = self.value.take();
        self.runtime.enter(move || drop(value));
    }
}
