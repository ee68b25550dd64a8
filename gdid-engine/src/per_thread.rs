//! The generator's current segment ([`Current`]) and its per-thread slots ([`PerThread`]): std's
//! thread-locals and arc-swap's in ordinary builds, loom's under `RUSTFLAGS="--cfg gdid_loom"`
//! (`gdid-engine/loom/tests/loom_block_handoff.rs`).
//!
//! What the model does not cover: under loom, [`PerThread`] is a map keyed by loom's thread ids,
//! not the std lookup (the one-entry thread-local cache, the thread's row of slots by generator
//! number, the thread-local destructor that hands a thread's index, and with it its row, on).
//! The model checks the hand-off given that each live thread finds a slot no other live thread
//! writes; that the std lookup gives exactly that, with threads starting and exiting while others
//! serve, is the stress test `gdid-engine/tests/test_threads_slots.rs`.

#[cfg(not(gdid_loom))]
pub(crate) use self::std_impl::{Current, Key, PerThread};

#[cfg(gdid_loom)]
pub(crate) use self::loom_impl::{Current, Key, PerThread};

#[cfg(not(gdid_loom))]
mod std_impl {
    use std::cell::Cell;
    use std::marker::PhantomData;
    use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

    use arc_swap::ArcSwap;

    use crate::dense_index::DenseIndices;
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

    /// Slots per chunk of a row: the unit in which a row grows.
    const CHUNK: usize = 64;

    /// `CHUNK` slots of one thread, for generators of consecutive numbers. Aligned to 128 bytes
    /// (two cache lines, as crossbeam's `CachePadded` on x86-64) so that two threads' rows never
    /// share a cache line: false sharing halved the 2-thread throughput in the engine benchmark.
    /// Within a row, neighbours are slots of the same thread.
    #[repr(align(128))]
    struct Chunk([Slot; CHUNK]);

    /// Buckets of chunks in a row: bucket `b` holds chunks `2^b - 1 .. 2^(b+1) - 1`, so
    /// generators numbered below `CHUNK * (2^26 - 1)` (about 4 billion alive at once) have a
    /// slot on every thread; one of a higher number has none (its ids come from the shared
    /// block).
    const CHUNK_BUCKETS: usize = 26;

    /// The slots of one thread index, by generator number. Written only by the thread holding
    /// the index (and by a generator's drop, which empties its slots once nobody serves it).
    struct Row {
        chunks: [OnceLock<&'static [Chunk]>; CHUNK_BUCKETS],
    }

    impl Row {
        /// The slot of generator `number`, if this row has its chunk.
        #[inline]
        fn slot(&self, number: usize) -> Option<&'static Slot> {
            let (bucket, at) = bucket_of(number / CHUNK);
            let chunk = self.chunks.get(bucket)?.get()?.get(at)?;
            Some(&chunk.0[number % CHUNK])
        }

        /// The slot of generator `number`, its chunk made by `make` if this row has none yet.
        fn slot_or(&self, number: usize, make: impl Fn() -> Slot) -> Option<&'static Slot> {
            let (bucket, at) = bucket_of(number / CHUNK);
            let chunks = self.chunks.get(bucket)?.get_or_init(|| {
                Box::leak(
                    (0..1usize << bucket)
                        .map(|_| Chunk(std::array::from_fn(|_| make())))
                        .collect(),
                )
            });
            Some(&chunks.get(at)?.0[number % CHUNK])
        }
    }

    /// The bucket of `index` and the position in it.
    #[inline]
    fn bucket_of(index: usize) -> (usize, usize) {
        let n = index + 1;
        let bucket = n.ilog2() as usize;
        (bucket, n - (1 << bucket))
    }

    /// One [`Slot`] per thread and generator: a table of a row per thread index and a column
    /// per generator number, both numbers dense ([`DenseIndices`]).
    ///
    /// - **Fast path**: [`HOT`], a `const`-initialized thread-local without destructor, holds the
    ///   number of the last generator this thread served and its slot: one thread-local read
    ///   and a compare against the number the caller's handle carries ([`Key`]): no line of the
    ///   generator read, no lock, no atomic.
    /// - **Another generator was served since**: the thread's row ([`ROW`], made the first time
    ///   the thread needs a slot) holds its slot of every generator by number: a thread-local
    ///   read, a bucket of the row and the slot, 32 bytes in memory only this thread writes, so
    ///   a thread serving 10,000 generators in turn keeps 320 KiB of slots, not the generators'
    ///   lines.
    /// - **Threads exit**: [`HOLDER`]'s destructor first clears [`HOT`] and [`ROW`], then gives
    ///   the thread's index back. The next thread that takes it gets that row, with the slices
    ///   left in it, and serves them first. From then on (in thread-local destructors run after
    ///   it) the exiting thread finds no slot and is given none, so one slot never has two
    ///   writers.
    /// - **Generators are dropped**: their slots are emptied in every row, then their number
    ///   goes to the next generator built, which finds them empty (a thread whose [`HOT`] still
    ///   names the number holds that very slot). Rows are never freed: memory is bounded by the
    ///   most threads and generators alive at once, and every `&'static Slot` stays valid.
    pub(crate) struct PerThread<T: 'static> {
        number: usize,
        of: PhantomData<&'static T>,
    }

    /// What a handle carries to find its generator's slots: the generator's number.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Key(usize);

    /// What [`PerThread`] gives for one thread: derefs to the value.
    pub(crate) type Local<'a, T> = &'a T;

    /// Numbers of live generators.
    static NUMBERS: DenseIndices = DenseIndices::new();
    /// Indices of live threads.
    static THREADS: DenseIndices = DenseIndices::new();
    /// The rows, by thread index: taken when a thread takes its index, read whole by statistics
    /// and by a generator's drop.
    static ROWS: Mutex<Vec<&'static Row>> = Mutex::new(Vec::new());

    /// An empty slot never filled: in [`HOT`] before a generator is served (under no
    /// generator's number), and what [`PerThread::get_or`] gives a thread whose index was given
    /// back (`take_many` finds nothing in it).
    static NO_SLOT: Slot = Slot::new();

    /// In [`HOT`]: no generator (numbers never reach it).
    const NONE: usize = usize::MAX;

    /// [`INDEX`] before this thread needed one.
    const UNASSIGNED: usize = usize::MAX;
    /// [`INDEX`] once this thread gave its index back: its thread-locals are being destroyed.
    const GIVEN_BACK: usize = usize::MAX - 1;

    thread_local! {
        /// The number of the generator this thread served last, and this thread's slot of it.
        static HOT: Cell<(usize, &'static Slot)> = const { Cell::new((NONE, &NO_SLOT)) };
        /// This thread's row; `None` before the thread needed one and once it gave its index
        /// back. No destructor, so it is readable until the thread is gone.
        static ROW: Cell<Option<&'static Row>> = const { Cell::new(None) };
        /// This thread's index, [`UNASSIGNED`] or [`GIVEN_BACK`]; no destructor.
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
            HOT.set((NONE, &NO_SLOT));
            ROW.set(None);
            INDEX.set(GIVEN_BACK);
            let index = self.0.get();
            if index != UNASSIGNED {
                THREADS.give_back(index);
            }
        }
    }

    /// This thread's row, its index taken the first time; `None` once it was given back.
    fn row() -> Option<&'static Row> {
        if let Some(row) = ROW.get() {
            return Some(row);
        }
        if INDEX.get() != UNASSIGNED {
            return None;
        }
        HOLDER
            .try_with(|holder| {
                let index = THREADS.take();
                holder.0.set(index);
                INDEX.set(index);
                let mut rows = lock(&ROWS);
                while rows.len() <= index {
                    rows.push(Box::leak(Box::new(Row {
                        chunks: [const { OnceLock::new() }; CHUNK_BUCKETS],
                    })));
                }
                let row = rows[index];
                ROW.set(Some(row));
                row
            })
            .ok()
    }

    /// Every row made so far.
    fn rows() -> Vec<&'static Row> {
        lock(&ROWS).clone()
    }

    impl<T> Drop for PerThread<T> {
        fn drop(&mut self) {
            // Nobody serves this generator any more: its slots are emptied before its number
            // goes to a generator to come.
            for row in rows() {
                if let Some(slot) = row.slot(self.number) {
                    slot.reset();
                }
            }
            NUMBERS.give_back(self.number);
        }
    }

    impl PerThread<Slot> {
        pub(crate) fn new() -> Self {
            PerThread {
                number: NUMBERS.take(),
                of: PhantomData,
            }
        }

        /// What a handle carries to find this generator's slots without reading it.
        pub(crate) fn key(&self) -> Key {
            Key(self.number)
        }

        /// This thread's slot if it served this generator last: the fast path. Reads only the
        /// key, not `self`.
        #[inline]
        pub(crate) fn hot(&self, key: Key) -> Option<Local<'_, Slot>> {
            let (number, slot) = HOT.get();
            (number == key.0).then_some(slot)
        }

        /// This thread's slot, if it has one.
        #[inline]
        pub(crate) fn get(&self) -> Option<Local<'_, Slot>> {
            let key = self.key();
            self.hot(key).or_else(|| self.find(key))
        }

        /// This thread's slot, found in its row (another generator was served since): not the
        /// cache, where [`hot`](Self::hot) looks. Reads only the key, not `self`.
        #[inline]
        pub(crate) fn find(&self, key: Key) -> Option<&'static Slot> {
            let slot = ROW.get()?.slot(key.0)?;
            HOT.set((key.0, slot));
            Some(slot)
        }

        /// This thread's slot, made by `make` the first time this thread's row needs its chunk
        /// (or the one an exited thread left); `None` once this thread's index was given back.
        pub(crate) fn try_get_or(&self, make: impl Fn() -> Slot) -> Option<Local<'_, Slot>> {
            self.get().or_else(|| self.adopt(make))
        }

        /// This thread's slot, made by `make` the first time this thread's row needs its chunk
        /// (or the one an exited thread left); an empty slot, never to be filled, once this
        /// thread's index was given back.
        pub(crate) fn get_or(&self, make: impl Fn() -> Slot) -> Local<'_, Slot> {
            self.try_get_or(make).unwrap_or(&NO_SLOT)
        }

        /// Gives this thread its slot: takes an index (and its row) if it has none, and the
        /// chunk of this generator's number if the row has none yet.
        #[cold]
        fn adopt(&self, make: impl Fn() -> Slot) -> Option<&'static Slot> {
            let slot = row()?.slot_or(self.number, make)?;
            HOT.set((self.number, slot));
            Some(slot)
        }

        /// Every thread's value, those of rows whose thread never served this generator
        /// included (they are empty).
        pub(crate) fn iter(&self) -> impl Iterator<Item = Local<'_, Slot>> {
            let number = self.number;
            rows().into_iter().filter_map(move |row| row.slot(number))
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

    /// What a handle carries to find its generator's slots: nothing in the model, which finds
    /// them in the generator.
    #[derive(Clone, Copy, Debug)]
    pub(crate) struct Key;

    impl<T> PerThread<T> {
        pub(crate) fn new() -> Self {
            PerThread(Mutex::new(Vec::new()))
        }

        pub(crate) fn key(&self) -> Key {
            Key
        }

        /// As [`get`](Self::get): the model has no one-entry cache.
        pub(crate) fn hot(&self, _: Key) -> Option<Local<'_, T>> {
            self.get()
        }

        /// As [`get`](Self::get): the model has no one-entry cache.
        pub(crate) fn find(&self, _: Key) -> Option<Local<'_, T>> {
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
