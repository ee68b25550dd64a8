//! The generator's current segment ([`Current`]) and its per-thread slots ([`PerThread`]): std's
//! thread-locals and arc-swap's in ordinary builds, loom's under `RUSTFLAGS="--cfg gdid_loom"`
//! (`gdid-engine/tests/loom_block_handoff.rs`).
//!
//! What the model does not cover: under loom, [`PerThread`] is a map keyed by loom's thread ids,
//! not the std lookup (the one-entry thread-local cache, the pool of slots, the thread-local
//! destructor that hands a slot on). The model checks the hand-off given that each live thread
//! finds a slot no other live thread writes; that the std lookup gives exactly that, with threads
//! starting and exiting while others serve, is the stress test
//! `gdid-engine/tests/test_threads_slots.rs`.

#[cfg(not(gdid_loom))]
pub(crate) use self::std_impl::{Current, PerThread};

#[cfg(gdid_loom)]
pub(crate) use self::loom_impl::{Current, PerThread};

#[cfg(not(gdid_loom))]
mod std_impl {
    use std::cell::{Cell, RefCell};
    use std::collections::HashMap;
    use std::marker::PhantomData;
    use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
    use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

    use arc_swap::ArcSwap;
    use foldhash::fast::FixedState;

    use crate::segment::Slot;

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

    /// One [`Slot`] per thread and generator.
    ///
    /// - **Fast path**: [`HOT`], a `const`-initialized thread-local without destructor, holds the
    ///   key of the last generator this thread served (never reused) and its slot: one
    ///   thread-local read and a compare, no thread id lookup, no lock, no atomic.
    /// - A thread's slots are in [`OWNED`], a map by generator key (found in constant time
    ///   however many generators the thread serves), whose destructor, when the thread exits, first
    ///   clears [`HOT`] and then gives each slot, with the slice left in it, to its generator's
    ///   free list: the next thread that asks that generator for a slot gets it and serves that
    ///   slice first. From then on (in thread-local destructors run after it) the exiting thread
    ///   finds no slot and is given none, so one slot never has two writers.
    /// - Slots are never freed: once their generator is dropped they go to a process-wide pool
    ///   that later generators take from. Memory is bounded by the most slots ever in use at
    ///   once, and the `&'static Slot` in [`HOT`] is always valid (a stale one is never used:
    ///   its key is that of a dropped generator).
    pub(crate) struct PerThread<T: 'static> {
        /// This generator's key in [`HOT`] and [`OWNED`].
        key: u64,
        shared: Arc<Registry>,
        of: PhantomData<&'static T>,
    }

    /// What [`PerThread`] gives for one thread: derefs to the value.
    pub(crate) type Local<'a, T> = &'a T;

    /// A generator's slots: every one (for statistics), and those that exited threads left.
    struct Registry {
        all: Mutex<Vec<&'static Slot>>,
        free: Mutex<Vec<&'static Slot>>,
    }

    /// The generators' keys: 0 is none.
    static NEXT_KEY: AtomicU64 = AtomicU64::new(1);

    /// The slots of dropped generators, emptied, to be used again.
    static POOL: Mutex<Vec<&'static Slot>> = Mutex::new(Vec::new());

    /// An empty slot never filled: in [`HOT`] before a generator is served (under key 0, never a
    /// generator's), and what [`PerThread::get_or`] gives a thread whose thread-locals are
    /// destroyed (`take_many` finds nothing in it).
    static NO_SLOT: Slot = Slot::new();

    thread_local! {
        /// The key of the generator this thread served last, and this thread's slot of it.
        static HOT: Cell<(u64, &'static Slot)> = const { Cell::new((0, &NO_SLOT)) };
        /// This thread's slots by generator key: the generator, the slot.
        static OWNED: Owned = const { Owned(RefCell::new(HashMap::with_hasher(KEYS))) };
    }

    /// How [`OWNED`] hashes a generator's key. The keys are the process's own sequential
    /// numbers, never a caller's, so a fixed seed is safe; a lookup costs the same whether the
    /// thread serves ten generators or ten thousand.
    const KEYS: FixedState = FixedState::with_seed(0x6764_6964);

    /// This thread's slots; when it exits, each goes to its generator's free list.
    struct Owned(RefCell<Slots>);

    /// A thread's slots by generator key: the generator, the slot.
    type Slots = HashMap<u64, (Weak<Registry>, &'static Slot), FixedState>;

    impl Drop for Owned {
        fn drop(&mut self) {
            // First: from now on this thread finds no slot.
            HOT.set((0, &NO_SLOT));
            for (_, (registry, slot)) in self.0.get_mut().drain() {
                if let Some(registry) = registry.upgrade() {
                    lock(&registry.free).push(slot);
                }
            }
        }
    }

    impl Drop for Registry {
        fn drop(&mut self) {
            // Nobody uses these slots any more: their generator is gone, and the threads that
            // remember them do so under its key, never asked for again.
            let all = std::mem::take(self.all.get_mut().unwrap_or_else(PoisonError::into_inner));
            for slot in &all {
                slot.reset();
            }
            lock(&POOL).extend(all);
        }
    }

    impl PerThread<Slot> {
        pub(crate) fn new() -> Self {
            PerThread {
                key: NEXT_KEY.fetch_add(1, Relaxed),
                shared: Arc::new(Registry {
                    all: Mutex::new(Vec::new()),
                    free: Mutex::new(Vec::new()),
                }),
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

        /// This thread's slot, found in [`OWNED`] (another generator was served since).
        #[cold]
        fn find(&self) -> Option<&'static Slot> {
            let slot = OWNED
                .try_with(|owned| {
                    let owned = owned.0.try_borrow().ok()?;
                    owned.get(&self.key).map(|(_, slot)| *slot)
                })
                .ok()
                .flatten()?;
            HOT.set((self.key, slot));
            Some(slot)
        }

        /// This thread's slot, made by `make` the first time (or one an exited thread left);
        /// `None` once this thread's thread-locals are being destroyed.
        pub(crate) fn try_get_or(&self, make: impl FnOnce() -> Slot) -> Option<Local<'_, Slot>> {
            self.get().or_else(|| self.adopt(make))
        }

        /// This thread's slot, made by `make` the first time (or one an exited thread left); an
        /// empty slot, never to be filled, once this thread's thread-locals are being destroyed.
        pub(crate) fn get_or(&self, make: impl FnOnce() -> Slot) -> Local<'_, Slot> {
            self.try_get_or(make).unwrap_or(&NO_SLOT)
        }

        /// Gives this thread a slot: one an exited thread left, else a pooled or a new one.
        #[cold]
        fn adopt(&self, make: impl FnOnce() -> Slot) -> Option<&'static Slot> {
            let slot = OWNED
                .try_with(|owned| {
                    let mut owned = owned.0.try_borrow_mut().ok()?;
                    let slot = lock(&self.shared.free).pop().unwrap_or_else(|| {
                        let slot = lock(&POOL)
                            .pop()
                            .unwrap_or_else(|| Box::leak(Box::new(make())));
                        lock(&self.shared.all).push(slot);
                        slot
                    });
                    // Forget the slots of dropped generators (back in the pool), when the map
                    // would grow: a thread that serves short-lived generators stays small.
                    if owned.len() == owned.capacity() {
                        owned.retain(|_, (registry, _)| registry.strong_count() > 0);
                    }
                    owned.insert(self.key, (Arc::downgrade(&self.shared), slot));
                    Some(slot)
                })
                .ok()
                .flatten()?;
            HOT.set((self.key, slot));
            Some(slot)
        }

        /// Every thread's value.
        pub(crate) fn iter(&self) -> impl Iterator<Item = Local<'_, Slot>> {
            lock(&self.shared.all).clone().into_iter()
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
