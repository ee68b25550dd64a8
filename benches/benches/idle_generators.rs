//! Idle generators: the memory each `BlockGenerator` holds once built and having served one id,
//! and the CPU that many idle generators use.
//!
//! On a tokio multi-thread runtime (2 workers), with one `MemoryAuthority` shared by every
//! generator, as a service shares its store, whose counters are made before anything is counted
//! (a store's rows are not the generator's memory; their cost is printed apart):
//!
//! 1. builds `--generators` generators (default 10,000) of their own sequences, default settings;
//! 2. has each serve one id on the main thread (`block_on`): each then holds a block and this
//!    thread's slot of it (the block is fetched by a task on a worker);
//! 3. waits `--settle` seconds (default 1; the rate probe each young generator starts fires at
//!    100 ms);
//! 4. sleeps `--idle` seconds (default 5) and reports the process's CPU time over that sleep.
//!
//! Memory: bytes live on the heap (allocated and not freed, by every thread), counted by a
//! counting global allocator, per generator; and the growth of the resident set (`VmRSS`). CPU:
//! the time on CPU of every thread of the process (`/proc/self/task/*/schedstat`, nanoseconds),
//! the user and system ticks of `/proc/self/stat`, and context switches (each a wake-up).
//!
//! `cargo bench -p gdid-benches --bench idle_generators` (about 10 s); `-- --json` prints one JSON
//! object instead (`scripts/bench-report idle`); `-- --test` runs 100 generators briefly. Linux
//! only (`/proc`).

// The one `unsafe` here is the `GlobalAlloc` impl, which forwards to `System` unchanged.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};
use std::time::Duration;

use gdid_engine::{BlockGenerator, CounterState, DynAuthority, MemoryAuthority};

/// Forwards to `System`, counting the bytes live and the allocations made (every thread).
struct Counting;

static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

fn grow(bytes: usize) {
    LIVE_BYTES.fetch_add(i64::try_from(bytes).unwrap_or(i64::MAX), Relaxed);
}

fn shrink(bytes: usize) {
    LIVE_BYTES.fetch_sub(i64::try_from(bytes).unwrap_or(i64::MAX), Relaxed);
}

// SAFETY: every call is forwarded to `System` with the caller's arguments; the counters are
// atomics, which never allocate.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is `System`'s.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grow(layout.size());
            ALLOCATIONS.fetch_add(1, Relaxed);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as above.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            grow(layout.size());
            ALLOCATIONS.fetch_add(1, Relaxed);
        }
        ptr
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as above.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            shrink(layout.size());
            grow(new_size);
            ALLOCATIONS.fetch_add(1, Relaxed);
        }
        new
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrink(layout.size());
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The heap and the resident set at one moment.
#[derive(Clone, Copy)]
struct Memory {
    live_bytes: i64,
    allocations: u64,
    rss_kib: u64,
}

impl Memory {
    fn now() -> Self {
        Memory {
            live_bytes: LIVE_BYTES.load(Relaxed),
            allocations: ALLOCATIONS.load(Relaxed),
            rss_kib: rss_kib(),
        }
    }

    /// Per generator since `before`: bytes live, allocations made, resident bytes.
    fn per(&self, before: &Memory, n: usize) -> (f64, f64, f64) {
        let n = n as f64;
        (
            (self.live_bytes - before.live_bytes) as f64 / n,
            (self.allocations - before.allocations) as f64 / n,
            (self.rss_kib as f64 - before.rss_kib as f64) * 1024.0 / n,
        )
    }
}

/// `VmRSS` of `/proc/self/status`, in KiB.
fn rss_kib() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The process's CPU use so far: ns on CPU (every thread), user + system ticks, context switches.
#[derive(Clone, Copy, Debug)]
struct Cpu {
    ns: u64,
    ticks: u64,
    switches: u64,
    threads: usize,
}

impl Cpu {
    fn now() -> Self {
        let mut cpu = Cpu {
            ns: 0,
            ticks: 0,
            switches: 0,
            threads: 0,
        };
        if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
            for task in tasks.flatten() {
                let path = task.path();
                let schedstat = std::fs::read_to_string(path.join("schedstat")).unwrap_or_default();
                cpu.ns += first_number(&schedstat);
                let status = std::fs::read_to_string(path.join("status")).unwrap_or_default();
                cpu.switches += status
                    .lines()
                    .filter(|line| line.contains("ctxt_switches:"))
                    .map(|line| first_number(line.split(':').nth(1).unwrap_or("")))
                    .sum::<u64>();
                cpu.threads += 1;
            }
        }
        // Fields 14 and 15 (utime, stime) of /proc/self/stat, after the command's parenthesis.
        let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
        if let Some((_, rest)) = stat.rsplit_once(')') {
            let fields: Vec<&str> = rest.split_whitespace().collect();
            cpu.ticks = fields
                .get(11..13)
                .map_or(0, |f| f.iter().map(|v| first_number(v)).sum());
        }
        cpu
    }
}

fn first_number(text: &str) -> u64 {
    text.split_whitespace()
        .next()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

struct Settings {
    generators: usize,
    settle: Duration,
    idle: Duration,
    json: bool,
}

fn settings() -> Settings {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| {
                v.parse::<f64>()
                    .unwrap_or_else(|_| panic!("{name}: not a number: {v}"))
            })
    };
    let test = args.iter().any(|a| a == "--test");
    let seconds = |name, default: f64| Duration::from_secs_f64(value(name).unwrap_or(default));
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let generators = value("--generators").map_or(if test { 100 } else { 10_000 }, |v| v as usize);
    Settings {
        generators: generators.max(1),
        settle: seconds("--settle", if test { 0.2 } else { 1.0 }),
        idle: seconds("--idle", if test { 0.2 } else { 5.0 }),
        json: args.iter().any(|a| a == "--json"),
    }
}

fn main() {
    let s = settings();
    let n = s.generators;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let names: Vec<String> = (0..n).map(|k| format!("sequence_{k}")).collect();

    // The store's side: one authority, its counters made.
    let start = Memory::now();
    let authority = MemoryAuthority::new(1);
    rt.block_on(async {
        for name in &names {
            let floor = CounterState { era: 0, next: 1 };
            authority.raise_floor("bench", name, floor).await.unwrap();
        }
    });
    let authority: Arc<dyn DynAuthority> = Arc::new(authority);
    let counters_made = Memory::now();

    let generators: Vec<BlockGenerator> = names
        .iter()
        .map(|name| {
            BlockGenerator::builder("bench", name)
                .shared_authority(Arc::clone(&authority))
                .build()
                .unwrap()
        })
        .collect();
    let built = Memory::now();
    rt.block_on(async {
        for ids in &generators {
            ids.next_id().await.unwrap();
        }
    });
    let served = Memory::now();
    std::thread::sleep(s.settle);
    let settled = Memory::now();
    let before = Cpu::now();
    std::thread::sleep(s.idle);
    let after = Cpu::now();
    // Every generator still has its block, and nothing allocated since the settling.
    assert!(generators.iter().all(|g| g.try_next_id().is_some()));

    let (authority_bytes, _, _) = counters_made.per(&start, n);
    let (build_bytes, build_allocs, _) = built.per(&counters_made, n);
    let (serve_bytes, serve_allocs, _) = served.per(&built, n);
    let (total_bytes, total_allocs, rss_bytes) = settled.per(&counters_made, n);
    let idle_ms = (after.ns - before.ns) as f64 / 1e6;
    let ticks = after.ticks - before.ticks;
    let switches = after.switches - before.switches;
    let seconds = s.idle.as_secs_f64();
    if s.json {
        println!(
            "{{\"generators\": {n}, \"authority_bytes\": {authority_bytes:.1}, \
             \"build_bytes\": {build_bytes:.1}, \"build_allocations\": {build_allocs:.2}, \
             \"serve_bytes\": {serve_bytes:.1}, \"serve_allocations\": {serve_allocs:.2}, \
             \"settled_bytes\": {total_bytes:.1}, \"settled_allocations\": {total_allocs:.2}, \
             \"rss_bytes\": {rss_bytes:.1}, \"idle_seconds\": {seconds}, \
             \"idle_cpu_ms\": {idle_ms:.3}, \"idle_ticks\": {ticks}, \
             \"idle_context_switches\": {switches}, \"threads\": {}}}",
            after.threads
        );
    } else {
        println!(
            "{n} generators, one MemoryAuthority shared, tokio multi-thread runtime (2 workers)"
        );
        println!(
            "the authority's counters: {authority_bytes:.0} B per sequence (not the generator's)"
        );
        println!(
            "built:          {build_bytes:.0} B live per generator ({build_allocs:.1} allocations)"
        );
        println!("one id served:  + {serve_bytes:.0} B ({serve_allocs:.1} allocations)");
        println!(
            "after {:.1} s:    {total_bytes:.0} B live per generator in all ({total_allocs:.1} allocations made); \
             RSS growth {rss_bytes:.0} B per generator",
            s.settle.as_secs_f64()
        );
        println!(
            "idle {seconds:.1} s: {idle_ms:.3} ms CPU (all {} threads), {ticks} ticks, {switches} context switches",
            after.threads
        );
    }
    drop(generators);
}
