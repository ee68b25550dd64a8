//! The generator's current segment ([`Current`]) and its per-thread slots ([`PerThread`]): std's
//! thread-locals and arc-swap's in ordinary builds, loom's under `RUSTFLAGS="--cfg gdid_loom"`
//! (`gdid-engine/tests/loom_block_handoff.rs`).
//!
//! What the model does not cover: under loom, [`PerThread`] is a map keyed by loom's thread ids,
//! not the std lookup (the one-entry thread-local cache, the slots by dense thread index, the
//! thread-local destructor that hands a thread's index, and with it its slots, on). The model
//! checks the hand-off given that each live thread finds a slot no other live thread writes;
//! that the std lookup gives exactly that, with threads starting and exiting while others serve,
//! is the stress test `gdid-engine/tests/test_threads_slots.rs`.

#[cfg(not(gdid_loom))]
pub(crate) use self::std_impl::{Current, PerThread};

#[cfg(gdid_loom)]
pub(crate) use self::loom_impl::{Current, PerThread};

#[cfg(not(gdid_loom))]
mod std_impl {
    use std::cell::Cell;
    use std::marker::PhantomData;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

    use arc_swap::ArcSwap;

    use crate::segment::Slot;
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

    /// Buckets of slots: bucket `b` holds the slots of thread indices `2^b - 1 .. 2^(b+1) - 1`,
    /// so 2^16 - 1 threads alive at once have a slot each; a thread of a higher index has none
    /// (its ids come from the shared block).
    const BUCKETS: usize = 16;

    /// One [`Slot`] per thread and generator.
    ///
    /// - **Fast path**: [`HOT`], a `const`-initialized thread-local without destructor, holds the
    ///   key of the last generator this thread served (never reused) and its slot: one
    ///   thread-local read and a compare, no thread id lookup, no lock, no atomic.
    /// - **Another generator was served since**: the thread's dense index ([`INDEX`], taken from
    ///   [`thread_index`] the first time the thread needs a slot) picks its slot in the
    ///   generator's buckets: a thread-local read and two loads, whether the thread serves ten
    ///   generators or ten thousand. A bucket is allocated the first time a thread of its range
    ///   needs a slot.
    /// - **Threads exit**: [`HOLDER`]'s destructor first clears [`HOT`] and [`INDEX`], then gives
    ///   the index back. The next thread that takes it gets that index's slot of every generator,
    ///   with the slice left in it, and serves that slice first. From then on (in thread-local
    ///   destructors run after it) the exiting thread finds no slot and is given none, so one
    ///   slot never has two writers.
    /// - Slots are never freed: once their generator is dropped, its buckets go to a
    ///   process-wide pool that later generators take from. Memory is bounded by the most slots
    ///   ever in use at once, and the `&'static Slot` in [`HOT`] is always valid (a stale one is
    ///   never used: its key is that of a dropped generator).
    ///
    /// The key and the first buckets share one cache line (`repr`): a thread that serves many
    /// generators in turn reads that line and its slot of each.
    #[repr(C, align(64))]
    pub(crate) struct PerThread<T: 'static> {
        /// This generator's key in [`HOT`].
        key: u64,
        buckets: [OnceLock<&'static [Slot]>; BUCKETS],
        of: PhantomData<&'static T>,
    }

    /// What [`PerThread`] gives for one thread: derefs to the value.
    pub(crate) type Local<'a, T> = &'a T;

    /// The generators' keys: 0 is none.
    static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

    /// The buckets of dropped generators, emptied, to be used again: `POOL[b]` holds buckets
    /// of `2^b` slots.
    static POOL: Mutex<[Vec<&'static [Slot]>; BUCKETS]> =
        Mutex::new([const { Vec::new() }; BUCKETS]);

    /// An empty slot never filled: in [`HOT`] before a generator is served (under key 0, never a
    /// generator's), and what [`PerThread::get_or`] gives a thread whose index was given back
    /// (`take_many` finds nothing in it).
    static NO_SLOT: Slot = Slot::new();

    /// [`INDEX`] before this thread needed one.
    const UNASSIGNED: usize = usize::MAX;
    /// [`INDEX`] once this thread gave its index back: its thread-locals are being destroyed.
    const GIVEN_BACK: usize = usize::MAX - 1;

    thread_local! {
        /// The key of the generator this thread served last, and this thread's slot of it.
        static HOT: Cell<(u64, &'static Slot)> = const { Cell::new((0, &NO_SLOT)) };
        /// This thread's dense index: no destructor, so it is readable until the thread is gone.
        static INDEX: Cell<usize> = const { Cell::new(UNASSIGNED) };
        /// Gives this thread's index back when the thread exits.
        static HOLDER: Holder = const { Holder(Cell::new(UNASSIGNED)) };
    }

    /// The index [`HOLDER`] gives back.
    struct Holder(Cell<usize>);

    impl Drop for Holder {
        fn drop(&mut self) {
            // First: from now on this thread finds no slot, so it never writes one again once
            // another thread may have taken its index.
            HOT.set((0, &NO_SLOT));
            INDEX.set(GIVEN_BACK);
            let index = self.0.get();
            if index != UNASSIGNED {
                thread_index::give_back(index);
            }
        }
    }

    /// This thread's index, taken the first time; `None` once it was given back.
    fn index() -> Option<usize> {
        match INDEX.get() {
            GIVEN_BACK => None,
            UNASSIGNED => HOLDER
                .try_with(|holder| {
                    let index = thread_index::take();
                    holder.0.set(index);
                    INDEX.set(index);
                    index
                })
                .ok(),
            index => Some(index),
        }
    }

    /// The bucket of thread `index` and the position in it.
    #[inline]
    fn bucket_of(index: usize) -> (usize, usize) {
        let n = index + 1;
        let bucket = n.ilog2() as usize;
        (bucket, n - (1 << bucket))
    }

    impl<T> Drop for PerThread<T> {
        fn drop(&mut self) {
            // Nobody uses these slots any more: their generator is gone, and the threads that
            // cache one do so under its key, never asked for again.
            let mut pool = lock(&POOL);
            for (bucket, slots) in self.buckets.iter_mut().enumerate() {
                if let Some(slots) = slots.take() {
                    slots.iter().for_each(Slot::reset);
                    pool[bucket].push(slots);
                }
            }
        }
    }

    impl PerThread<Slot> {
        pub(crate) fn new() -> Self {
            PerThread {
                key: NEXT_KEY.fetch_add(1, Relaxed),
                buckets: [const { OnceLock::new() }; BUCKETS],
                of: PhantomData,
            }
        }

        /// This thread's slot if it served this generator last: the fast path.
        #[inline]
        pub(crate) fn hot(&self) -> Option<Local<'_, Slot>> {
            let (key, slot) = HOT.get();
            (key == self.key).then_some(slot)
        }

        /// This thread's slot, if it has one.
        #[inline]
        pub(crate) fn get(&self) -> Option<Local<'_, Slot>> {
            self.hot().or_else(|| self.find())
        }

        /// This thread's slot, found by its index (another generator was served since): not
        /// the cache, where [`hot`](Self::hot) looks.
        #[inline]
        pub(crate) fn find(&self) -> Option<&'static Slot> {
            let index = INDEX.get();
            if index >= GIVEN_BACK {
                return None;
            }
            let (bucket, at) = bucket_of(index);
            let slot = self.buckets.get(bucket)?.get()?.get(at)?;
            HOT.set((self.key, slot));
            Some(slot)
        }

        /// This thread's slot, made by `make` the first time a thread of its bucket needs one
        /// (or the one an exited thread left); `None` once this thread's index was given back.
        pub(crate) fn try_get_or(&self, make: impl Fn() -> Slot) -> Option<Local<'_, Slot>> {
            self.get().or_else(|| self.adopt(make))
        }

        /// This thread's slot, made by `make` the first time a thread of its bucket needs one
        /// (or the one an exited thread left); an empty slot, never to be filled, once this
        /// thread's index was given back.
        pub(crate) fn get_or(&self, make: impl Fn() -> Slot) -> Local<'_, Slot> {
            self.try_get_or(make).unwrap_or(&NO_SLOT)
        }

        /// Gives this thread its slot: takes an index if it has none, and the bucket of its
        /// index from the pool (or a new one) if no thread of the bucket needed one before.
        #[cold]
        fn adopt(&self, make: impl Fn() -> Slot) -> Option<&'static Slot> {
            let (bucket, at) = bucket_of(index()?);
            let slots = self.buckets.get(bucket)?.get_or_init(|| {
                let pooled = lock(&POOL)[bucket].pop();
                pooled.unwrap_or_else(|| Box::leak((0..1usize << bucket).map(|_| make()).collect()))
            });
            let slot = slots.get(at)?;
            HOT.set((self.key, slot));
            Some(slot)
        }

        /// Every thread's value, those of indices no thread used included (they are empty).
        pub(crate) fn iter(&self) -> impl Iterator<Item = Local<'_, Slot>> {
            self.buckets
                .iter()
                .filter_map(OnceLock::get)
                .flat_map(|slots| slots.iter())
        }
    }

    fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
        mutex.lock().unwrap_or_else(PoisonError::into_inner)
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
    /// [`get_or`](Self::get_or) (`get` finds nothing for a thread that never had one).
    pub(crate) struct PerThread<T>(Mutex<Vec<(Option<ThreadId>, Arc<T>)>>);

    /// What [`PerThread`] gives for one thread: derefs to the value.
    pub(crate) type Local<'a, T> = Arc<T>;

    impl<T> PerThread<T> {
        pub(crate) fn new() -> Self {
            PerThread(Mutex::new(Vec::new()))
        }

        /// As [`get`](Self::get): the model has no one-entry cache.
        pub(crate) fn hot(&self) -> Option<Local<'_, T>> {
            self.get()
        }

        /// As [`get`](Self::get): the model has no one-entry cache.
        pub(crate) fn find(&self) -> Option<Local<'_, T>> {
            self.get()
        }

        pub(crate) fn get(&self) -> Option<Local<'_, T>> {
            let me = Some(loom::thread::current().id());
            let all = self.0.lock().unwrap();
            all.iter()
                .find(|(thread, _)| *thread == me)
                .map(|(_, value)| Arc::clone(value))
        }

        /// As [`get_or`](Self::get_or): a model thread always has its thread-locals.
        pub(crate) fn try_get_or(&self, make: impl FnOnce() -> T) -> Option<Local<'_, T>> {
            Some(self.get_or(make))
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
