//! One operation, repeated: the workload `scripts/bench-report instructions` runs under
//! `valgrind --tool=callgrind` to count instructions per operation, a figure that does not move
//! with whatever else the machine does.
//!
//! `instructions OPERATION N` does the operation's set-up, then the operation `N` times, each
//! input and output through `black_box` as in the criterion benches (the same inputs as
//! `benches/codecs.rs`, the same generators as `benches/engine.rs`). Run for `N` and `2N`, the
//! set-up cancels: (I(2N) - I(N)) / N is the cost of one operation, loop included (two or three
//! instructions). `instructions --list` names the operations; `instructions --test` (as
//! `cargo bench -- --test` passes it) runs each a thousand times, as a smoke test. Operations:
//!
//! - `next_id`, `try_next_id`: `BlockGenerator::next_id().await` and `try_next_id()` (with
//!   `next_id().await` when no block is in hand), on a generator as `per_id` in `engine.rs` builds
//!   it: dynamic blocks, so that refills are counted at the rate they come;
//! - `atomic_fetch_add`: an uncontended `AtomicU64::fetch_add` on a counter of its own cache line;
//! - `uuid_now_v7`: `Uuid::now_v7()` (the clock's system call is not counted: valgrind counts
//!   user-space instructions only);
//! - `many_sequences_<count>`: `next_id().await` round-robin over `count` generators, blocks of
//!   2^20, as `many_sequences` in `engine.rs` (each generator has its block and this thread its
//!   slot before the count starts);
//! - `ramp_up_{built,fresh,steady}`: `ramp_up` in `engine.rs` at `N / 1,000` new generators
//!   (default sizing): built and closed; with their first 1,000 ids each, round-robin; with their
//!   first and next 1,000. Per id, `fresh - built` is the first window (each generator's first
//!   blocks, building left out, as the criterion bench leaves it out) and `steady - fresh` the
//!   next;
//! - the codecs: `format_colon_{typical,long}`, `format_hex`, `parse_colon_{typical,long}`,
//!   `parse_hex`, and `{leb,compact}_{encode,decode}_{small_a0,small_a3,big}` (the `varint`
//!   group's ids: encode into a stack buffer, decode from the encoded bytes).
//!
//! `cargo bench -p gdid-benches --bench instructions --no-run` builds it (the bench profile:
//! release with debug info).

use std::hint::black_box;
use std::sync::atomic::{AtomicU64, Ordering};

use gdid_core::Gdid;
use gdid_engine::{BlockGenerator, IdOrder, MemoryAuthority};

/// A typical id, as `benches/codecs.rs` (`GDID_TYPICAL`).
const GDID_TYPICAL: &str = "1293:3:57";
/// The longest colon form (`Gdid::MAX`).
const GDID_LONG: &str = "4294967295:15:1152921504606846975";
/// The hex form of `GDID_TYPICAL`.
const GDID_HEX: &str = "0000050d3000000000000039";

/// The operations with a fixed name (`many_sequences_<count>` besides).
const OPERATIONS: &[&str] = &[
    "next_id",
    "try_next_id",
    "atomic_fetch_add",
    "uuid_now_v7",
    "format_colon_typical",
    "format_colon_long",
    "format_hex",
    "parse_colon_typical",
    "parse_colon_long",
    "parse_hex",
    "leb_encode_small_a0",
    "leb_encode_small_a3",
    "leb_encode_big",
    "leb_decode_small_a0",
    "leb_decode_small_a3",
    "leb_decode_big",
    "compact_encode_small_a0",
    "compact_encode_small_a3",
    "compact_encode_big",
    "compact_decode_small_a0",
    "compact_decode_small_a3",
    "compact_decode_big",
    "ramp_up_built",
    "ramp_up_fresh",
    "ramp_up_steady",
];

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

/// A value alone on its cache lines, as in `engine.rs`.
#[repr(align(128))]
struct CachePadded<T>(T);

/// Calls `make` `n` times, keeping each result alive.
fn repeat<T>(n: u64, mut make: impl FnMut() -> T) {
    for _ in 0..n {
        black_box(make());
    }
}

/// The `varint` group's ids (`benches/codecs.rs`).
fn varint_id(label: &str) -> Option<Gdid> {
    let (era, authority, counter) = match label {
        "small_a0" => (5, 0, 123),
        "small_a3" => (5, 3, 123),
        "big" => (1_000_000, 15, 1 << 59),
        _ => return None,
    };
    Some(Gdid::from_parts(era, authority, counter).expect("valid"))
}

/// `next_id().await` `n` times, round-robin over `count` generators of their own sequences.
fn many_sequences(count: usize, n: u64) {
    let rt = runtime();
    let generators = gdid_benches::sequences(count);
    rt.block_on(async {
        for ids in &generators {
            ids.next_id().await.unwrap();
        }
        let mut at = 0;
        for _ in 0..n {
            black_box(generators[at].next_id().await.unwrap());
            at = if at + 1 == count { 0 } else { at + 1 };
        }
    });
}

/// Ids each generator serves in one window of the ramp-up, as `ramp_up` in `engine.rs`.
const RAMP_IDS_PER_GENERATOR: u64 = 1_000;

/// `ramp_up` of `engine.rs` at `n` ids: `n / 1,000` new generators (default sizing, each starting
/// from the minimum block), then `windows` windows of 1,000 ids from each, round-robin, then
/// every generator closed.
fn ramp_up(n: u64, windows: u64) {
    let rt = runtime();
    let count = usize::try_from(n.div_ceil(RAMP_IDS_PER_GENERATOR)).expect("a count of generators");
    let generators = gdid_benches::fresh_sequences(count);
    rt.block_on(async {
        for _ in 0..windows * RAMP_IDS_PER_GENERATOR {
            for ids in &generators {
                black_box(ids.next_id().await.unwrap());
            }
        }
        for ids in &generators {
            ids.close()
                .await
                .expect("an in-memory authority takes ids back");
        }
    });
}

/// Runs `operation` `n` times after its set-up; `false` when there is no such operation.
fn run(operation: &str, n: u64) -> bool {
    if let Some(phase) = operation.strip_prefix("ramp_up_") {
        let windows = match phase {
            "built" => 0,
            "fresh" => 1,
            "steady" => 2,
            _ => return false,
        };
        ramp_up(n, windows);
        return true;
    }
    if let Some(count) = operation.strip_prefix("many_sequences_") {
        return match count.parse::<usize>() {
            Ok(count) if count > 0 => {
                many_sequences(count, n);
                true
            }
            _ => false,
        };
    }
    if let Some((form, rest)) = operation.split_once('_')
        && (form == "leb" || form == "compact")
    {
        let compact = form == "compact";
        let Some((direction, label)) = rest.split_once('_') else {
            return false;
        };
        let Some(id) = varint_id(label) else {
            return false;
        };
        match direction {
            "encode" => {
                let mut buf = [0u8; Gdid::VARINT_MAX_LEN];
                repeat(n, || {
                    let id = black_box(&id);
                    let written = if compact {
                        id.write_compact(&mut buf)
                    } else {
                        id.write_leb(&mut buf)
                    };
                    let n = written.expect("VARINT_MAX_LEN holds every encoding");
                    black_box(&buf[..n]);
                });
            }
            "decode" => {
                let mut encoded = Vec::new();
                if compact {
                    id.encode_compact(&mut encoded);
                } else {
                    id.encode_leb(&mut encoded);
                }
                let input = encoded.as_slice();
                repeat(n, || {
                    let input = black_box(input);
                    if compact {
                        Gdid::decode_compact(input)
                    } else {
                        Gdid::decode_leb(input)
                    }
                });
            }
            _ => return false,
        }
        return true;
    }
    match operation {
        "next_id" | "try_next_id" => {
            let rt = runtime();
            // As `gdid_generator(IdOrder::PerThread)` in `engine.rs`.
            let generator = BlockGenerator::builder("bench", "ids")
                .authority(MemoryAuthority::new(1))
                .order(IdOrder::PerThread)
                .build()
                .unwrap();
            rt.block_on(generator.next_id()).unwrap();
            if operation == "next_id" {
                rt.block_on(async {
                    for _ in 0..n {
                        black_box(generator.next_id().await.unwrap());
                    }
                });
            } else {
                repeat(n, || match generator.try_next_id() {
                    Some(id) => id,
                    None => rt.block_on(generator.next_id()).unwrap(),
                });
            }
        }
        "atomic_fetch_add" => {
            let counter = Box::new(CachePadded(AtomicU64::new(0)));
            repeat(n, || counter.0.fetch_add(1, Ordering::Relaxed));
        }
        "uuid_now_v7" => {
            black_box(uuid::Uuid::now_v7());
            repeat(n, uuid::Uuid::now_v7);
        }
        "format_colon_typical" | "format_colon_long" => {
            let id = if operation.ends_with("typical") {
                Gdid::try_parse(GDID_TYPICAL).expect("valid gdid")
            } else {
                Gdid::MAX
            };
            let mut buf = [0u8; Gdid::TEXT_MAX_LEN];
            repeat(n, || {
                black_box(black_box(&id).encode_text(&mut buf));
            });
        }
        "format_hex" => {
            let id = Gdid::try_parse(GDID_TYPICAL).expect("valid gdid");
            let mut buf = [0u8; Gdid::HEX_LEN];
            repeat(n, || {
                black_box(black_box(&id).encode_hex_lower(&mut buf));
            });
        }
        "parse_colon_typical" => repeat(n, || Gdid::try_parse(black_box(GDID_TYPICAL))),
        "parse_colon_long" => repeat(n, || Gdid::try_parse(black_box(GDID_LONG))),
        "parse_hex" => repeat(n, || Gdid::try_parse(black_box(GDID_HEX))),
        _ => return false,
    }
    true
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args.as_slice() {
        ["--list"] => {
            for operation in OPERATIONS {
                println!("{operation}");
            }
            println!("many_sequences_<count>");
        }
        [operation, n] if !operation.starts_with('-') => {
            let Ok(n) = n.parse::<u64>() else {
                eprintln!("not a count: {n}");
                std::process::exit(2);
            };
            if !run(operation, n) {
                eprintln!("unknown operation {operation}: see --list");
                std::process::exit(2);
            }
        }
        // `cargo bench -- --test` (or `cargo test --benches`): each operation, briefly.
        _ if args.contains(&"--test") => {
            for operation in OPERATIONS {
                assert!(run(operation, 1_000), "{operation}");
            }
            for count in [1, 100] {
                assert!(run(&format!("many_sequences_{count}"), 1_000));
            }
            println!("instructions: {} operations ran", OPERATIONS.len() + 2);
        }
        // `cargo bench` passes `--bench`: nothing to time here, the counts need valgrind.
        _ => eprintln!(
            "instructions: run by `scripts/bench-report instructions` under valgrind \
             (usage: instructions OPERATION N | --list | --test)"
        ),
    }
}
