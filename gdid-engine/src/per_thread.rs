//! The generator's current segment ([`Current`]) and its per-thread slots ([`PerThread`]): slots
//! by dense thread index and arc-swap's in ordinary builds, loom's under
//! `RUSTFLAGS="--cfg gdid_loom"` (`gdid-engine/tests/loom_block_handoff.rs`).
//!
//! What the model does not cover: under loom, [`PerThread`] is a map keyed by loom's thread ids,
//! not the std lookup (the dense thread index, given back by a thread-local destructor and
//! taken, with the slots it indexes, by the next thread). The model checks the hand-off given that each live thread
//! finds a slot no other live thread writes; that the std lookup gives exactly that, with threads
//! starting and exiting while others serve, is the stress test
//! `gdid-engine/tests/test_threads_slots.rs`.

#[cfg(not(gdid_loom))]
pub(crate) use self::std_impl::{Current, PerThread};

#[cfg(gdid_loom)]
pub(crate) use self::loom_impl::{Current, PerThread};

#[cfg(not(gdid_loom))]
mod std_impl {
    use std::sync::{Arc, OnceLock};

    use arc_swap::ArcSwap;

    use crate::thread_index;

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

    /// Buckets after the first value: bucket `b` holds the values of indices `2^b..2^(b+1)`, so
    /// 2^16 threads alive at once have a value each; a thread of a higher index has none (its
    /// ids come from the shared block).
    const BUCKETS: usize = 16;

    /// One value per live thread, by the thread's dense index ([`thread_index`]).
    ///
    /// - **Lookup**: a thread-local read and an array access, the same for a thread serving one
    ///   generator or ten thousand: no map, no lock, no atomic read-modify-write. The value of
    ///   index 0 is inline (a generator served from one thread touches no other memory); the
    ///   others are in buckets allocated the first time a thread of their range asks.
    /// - **Threads exit**: the index goes back, and the next thread that asks for one gets it,
    ///   and with it this value (with the slice left in it, served first). A thread asking from
    ///   a thread-local destructor run after it gave its index back gets no value, so one value
    ///   never has two writers.
    /// - A slot is aligned to its own cache lines (`Slot`'s `repr`): a thread writing its slot
    ///   never slows another reading theirs, or the generator's fields beside it.
    pub(crate) struct PerThread<T> {
        first: T,
        rest: [OnceLock<Box<[T]>>; BUCKETS],
    }

    /// What [`PerThread`] gives for one thread: derefs to the value.
    pub(crate) type Local<'a, T> = &'a T;

    /// The bucket of `index` (at least 1) and the position in it.
    #[inline]
    fn bucket_of(index: usize) -> (usize, usize) {
        let bucket = index.ilog2() as usize;
        (bucket, index - (1 << bucket))
    }

    impl<T: Default> PerThread<T> {
        pub(crate) fn new() -> Self {
            PerThread {
                first: T::default(),
                rest: std::array::from_fn(|_| OnceLock::new()),
            }
        }

        /// This thread's value, if its index has one already.
        #[inline]
        pub(crate) fn get(&self) -> Option<Local<'_, T>> {
            match thread_index::current()? {
                0 => Some(&self.first),
                index => {
                    let (bucket, at) = bucket_of(index);
                    Some(self.rest.get(bucket)?.get()?.get(at)?)
                }
            }
        }

        /// This thread's value (that a thread which exited left, or a new one); `None` once
        /// this thread's thread-locals are being destroyed, or beyond 2^16 threads alive.
        pub(crate) fn try_get_or_default(&self) -> Option<Local<'_, T>> {
            match thread_index::current()? {
                0 => Some(&self.first),
                index => {
                    let (bucket, at) = bucket_of(index);
                    let values = self
                        .rest
                        .get(bucket)?
                        .get_or_init(|| (0..1usize << bucket).map(|_| T::default()).collect());
                    Some(values.get(at)?)
                }
            }
        }

        /// Every thread's value, those never used included (they hold the default).
        pub(crate) fn iter(&self) -> impl Iterator<Item = Local<'_, T>> {
            let rest = self
                .rest
                .iter()
                .filter_map(OnceLock::get)
                .flat_map(|values| values.iter());
            std::iter::once(&self.first).chain(rest)
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

    /// One value per model thread. As the std build does, a thread that exited
    /// ([`release`](Self::release)) leaves its value to the next thread that asks for one with
    /// [`try_get_or_default`](Self::try_get_or_default) (`get` finds nothing for a thread that
    /// never had one).
    pub(crate) struct PerThread<T>(Mutex<Vec<(Option<ThreadId>, Arc<T>)>>);

    /// What [`PerThread`] gives for one thread: derefs to the value.
    pub(crate) type Local<'a, T> = Arc<T>;

    impl<T: Default> PerThread<T> {
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

        /// A model thread always has its thread-locals: never `None`.
        pub(crate) fn try_get_or_default(&self) -> Option<Local<'_, T>> {
            let me = Some(loom::thread::current().id());
            let mut all = self.0.lock().unwrap();
            if let Some((_, value)) = all.iter().find(|(thread, _)| *thread == me) {
                return Some(Arc::clone(value));
            }
            if let Some((thread, value)) = all.iter_mut().find(|(thread, _)| thread.is_none()) {
                *thread = me;
                return Some(Arc::clone(value));
            }
            let value = Arc::new(T::default());
            all.push((me, Arc::clone(&value)));
            Some(value)
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
