//! The synchronisation primitives of the block generator's hand-off between the shared block and
//! the threads' slices: std's, arc-swap's and thread_local's in ordinary builds, loom's under
//! `RUSTFLAGS="--cfg gdid_loom"`, so that the model checker runs the real code
//! (`gdid-core/tests/loom_block_handoff.rs`).
//!
//! Only what the hand-off uses is here: the atomics of [`Segment`](super::segment::Segment) and
//! [`Slot`](super::segment::Slot), the generator's state lock, the current segment
//! ([`Current`]) and the per-thread slots ([`PerThread`]).

#[cfg(not(gdid_loom))]
pub(crate) use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, fence};
#[cfg(not(gdid_loom))]
pub(crate) use std::sync::{Mutex, MutexGuard};

#[cfg(gdid_loom)]
pub(crate) use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, fence};
#[cfg(gdid_loom)]
pub(crate) use loom::sync::{Mutex, MutexGuard};

#[cfg(not(gdid_loom))]
pub(crate) use self::std_impl::{Current, PerThread};

#[cfg(gdid_loom)]
pub(crate) use self::loom_impl::{Current, PerThread};

#[cfg(not(gdid_loom))]
mod std_impl {
    use std::sync::Arc;

    use arc_swap::ArcSwap;
    use thread_local::ThreadLocal;

    /// A value read without a lock and replaced whole: [`ArcSwap`].
    pub(crate) struct Current<T>(ArcSwap<T>);

    /// What [`Current::load`] gives: derefs to the value.
    pub(crate) type Loaded<T> = arc_swap::Guard<Arc<T>>;

    impl<T> Current<T> {
        pub(crate) fn new(value: T) -> Self {
            Current(ArcSwap::from_pointee(value))
        }

        #[inline]
        pub(crate) fn load(&self) -> Loaded<T> {
            self.0.load()
        }

        /// Replaces the value, returning the previous one.
        pub(crate) fn swap(&self, value: Arc<T>) -> Arc<T> {
            self.0.swap(value)
        }
    }

    /// One value per thread: [`ThreadLocal`].
    pub(crate) struct PerThread<T: Send>(ThreadLocal<T>);

    /// What [`PerThread`] gives for one thread: derefs to the value.
    pub(crate) type Local<'a, T> = &'a T;

    impl<T: Send + Sync> PerThread<T> {
        pub(crate) fn new() -> Self {
            PerThread(ThreadLocal::new())
        }

        /// This thread's value, if it has one.
        #[inline]
        pub(crate) fn get(&self) -> Option<Local<'_, T>> {
            self.0.get()
        }

        /// This thread's value, made by `make` the first time.
        pub(crate) fn get_or(&self, make: impl FnOnce() -> T) -> Local<'_, T> {
            self.0.get_or(make)
        }

        /// Every thread's value.
        pub(crate) fn iter(&self) -> impl Iterator<Item = Local<'_, T>> {
            self.0.iter()
        }
    }
}

#[cfg(gdid_loom)]
mod loom_impl {
    use std::sync::Arc;

    use loom::sync::{Mutex, RwLock};
    use loom::thread::ThreadId;

    /// A value read and replaced whole, under a lock the model checker sees.
    pub(crate) struct Current<T>(RwLock<Arc<T>>);

    /// What [`Current::load`] gives: derefs to the value.
    pub(crate) type Loaded<T> = Arc<T>;

    impl<T> Current<T> {
        pub(crate) fn new(value: T) -> Self {
            Current(RwLock::new(Arc::new(value)))
        }

        pub(crate) fn load(&self) -> Loaded<T> {
            Arc::clone(&self.0.read().unwrap())
        }

        pub(crate) fn swap(&self, value: Arc<T>) -> Arc<T> {
            std::mem::replace(&mut *self.0.write().unwrap(), value)
        }
    }

    /// One value per model thread. As `thread_local` does, a thread that exited
    /// ([`release`](Self::release)) leaves its value to the next thread that asks for one with
    /// [`get_or`](Self::get_or) (`get` finds nothing for a thread that never had one).
    pub(crate) struct PerThread<T>(Mutex<Vec<(Option<ThreadId>, Arc<T>)>>);

    /// What [`PerThread`] gives for one thread: derefs to the value.
    pub(crate) type Local<'a, T> = Arc<T>;

    impl<T> PerThread<T> {
        pub(crate) fn new() -> Self {
            PerThread(Mutex::new(Vec::new()))
        }

        pub(crate) fn get(&self) -> Option<Local<'_, T>> {
            let me = Some(loom::thread::current().id());
            let all = self.0.lock().unwrap();
            all.iter()
                .find(|(thread, _)| *thread == me)
                .map(|(_, value)| Arc::clone(value))
        }

        pub(crate) fn get_or(&self, make: impl FnOnce() -> T) -> Local<'_, T> {
            let me = Some(loom::thread::current().id());
            let mut all = self.0.lock().unwrap();
            if let Some((_, value)) = all.iter().find(|(thread, _)| *thread == me) {
                return Arc::clone(value);
            }
            if let Some((thread, value)) = all.iter_mut().find(|(thread, _)| thread.is_none()) {
                *thread = me;
                return Arc::clone(value);
            }
            let value = Arc::new(make());
            all.push((me, Arc::clone(&value)));
            value
        }

        /// The calling thread exits: its value goes to the next thread without one.
        pub(crate) fn release(&self) {
            let me = Some(loom::thread::current().id());
            let mut all = self.0.lock().unwrap();
            if let Some((thread, _)) = all.iter_mut().find(|(thread, _)| *thread == me) {
                *thread = None;
            }
        }

        pub(crate) fn iter(&self) -> impl Iterator<Item = Local<'_, T>> {
            let all: Vec<Arc<T>> = self
                .0
                .lock()
                .unwrap()
                .iter()
                .map(|(_, value)| Arc::clone(value))
                .collect();
            all.into_iter()
        }
    }
}
