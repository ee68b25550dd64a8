//! No codec path with a non-allocating API allocates: parse (colon, hex, bytes), encode into a
//! caller buffer or through `fmt::Write` into a stack buffer, `leb`/`compact` into a slice and
//! back, and ELink into a stack buffer and back. Error paths included.
//!
//! A counting `#[global_allocator]` (a thin wrapper around `System`) counts the allocations made
//! on the calling thread, so the test harness's own threads do not disturb the count.

// The one `unsafe` here is the `GlobalAlloc` impl, which forwards to `System` unchanged.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::fmt::{self, Write as _};
use std::hint::black_box;

use gdid_core::{COUNTER_MAX, Gdid};

struct Counting;

thread_local! {
    /// Allocations (and reallocations) made by this thread.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count_one() {
    // `try_with`: a thread being torn down has no counter left to bump.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is forwarded to `System` with the caller's arguments; the counter is a
// `const`-initialized thread-local `Cell` without destructor, which never allocates.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: the caller's contract is `System`'s.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: as above.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: as above.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as above.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> u64 {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

/// Asserts that `f` allocates nothing.
#[track_caller]
fn assert_no_alloc(path: &str, f: impl FnOnce()) {
    assert_eq!(allocations(f), 0, "{path} allocated");
}

/// A `fmt::Write` into a stack array.
struct StackText {
    buf: [u8; 256],
    len: usize,
}

impl StackText {
    fn new() -> Self {
        StackText {
            buf: [0; 256],
            len: 0,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(&self.buf[..self.len]).expect("formatters write UTF-8")
    }
}

impl fmt::Write for StackText {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        self.buf
            .get_mut(self.len..end)
            .ok_or(fmt::Error)?
            .copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

fn ids() -> [Gdid; 5] {
    [
        Gdid::ZERO,
        Gdid::from_parts(1293, 3, 57).expect("valid"),
        Gdid::from_parts(5, 0, 123).expect("valid"),
        Gdid::from_parts(1_000_000, 15, 1 << 59).expect("valid"),
        Gdid::from_parts(u32::MAX, 15, COUNTER_MAX).expect("valid"),
    ]
}

#[test]
fn the_counter_sees_an_allocation() {
    assert_eq!(allocations(|| drop(black_box(vec![1u8; 16]))), 1);
}

#[test]
fn text_parsing_does_not_allocate() {
    let inputs = [
        "1293:3:57",
        "4294967295:15:1152921504606846975",
        "   231:2:3123   ",
        "\t0007:0:0010",
        "0000050d3000000000000039",
        "0x0000050D3000000000000039",
        // Errors, each kind.
        "",
        "1:2:3:4",
        "1::3",
        "1:x:3",
        "1:18:3",
        "0:0:99999999999999999999999",
        "12345",
        "00000000100000000000004g",
        "1:2:3é",
    ];
    for input in inputs {
        assert_no_alloc(input, || {
            black_box(Gdid::try_parse(black_box(input))).ok();
            black_box(black_box(input).parse::<Gdid>()).ok();
        });
    }
    // The error's message through `fmt::Write` too.
    let error = Gdid::try_parse("1:18:3").expect_err("authority 18");
    let mut out = StackText::new();
    assert_no_alloc("ParseError Display", || {
        write!(out, "{error}").expect("fits");
    });
    assert_eq!(
        out.as_str(),
        "the authority segment at byte 2 is out of range: the maximum is 15"
    );
}

#[test]
fn text_formatting_into_stack_buffers_does_not_allocate() {
    for id in ids() {
        let mut text = [0u8; Gdid::TEXT_MAX_LEN];
        let mut hex = [0u8; Gdid::HEX_LEN];
        assert_no_alloc("encode_text", || {
            black_box(id.encode_text(&mut text));
        });
        assert_no_alloc("encode_hex_lower/upper", || {
            black_box(id.encode_hex_lower(&mut hex));
            black_box(id.encode_hex_upper(&mut hex));
        });
        let mut out = StackText::new();
        assert_no_alloc("Display/LowerHex/UpperHex/Debug via fmt::Write", || {
            write!(out, "{id} {id:x} {id:X} {id:#x} {id:>40} {id:?}").expect("fits");
        });
        let expected = format!("{id} {id:x} {id:X} {id:#x} {id:>40} {id:?}");
        assert_eq!(out.as_str(), expected);
    }
}

#[test]
fn the_byte_form_does_not_allocate() {
    for id in ids() {
        let bytes = id.to_bytes();
        assert_no_alloc("from_slice/to_bytes/as_bytes", || {
            let back = Gdid::from_slice(black_box(&bytes[..])).expect("12 bytes");
            black_box(back.to_bytes());
            black_box(*back.as_bytes());
            black_box(Gdid::try_from(black_box(&bytes[..11]))).ok();
            black_box(Gdid::from_bytes(black_box(bytes)));
        });
    }
}

#[test]
fn leb_and_compact_into_slices_and_back_do_not_allocate() {
    for id in ids() {
        let mut out = [0u8; Gdid::VARINT_MAX_LEN];
        let mut leb_len = 0;
        let mut compact_len = 0;
        assert_no_alloc("write_leb/write_compact", || {
            leb_len = id.write_leb(&mut out).expect("room");
            black_box(&out);
            compact_len = id.write_compact(&mut out).expect("room");
            black_box(&out);
            black_box(id.write_leb(&mut out[..1])).ok();
        });
        assert_no_alloc("encode_leb/encode_compact into &mut [u8]", || {
            id.encode_leb(&mut &mut out[..]);
            black_box(&out);
            id.encode_compact(&mut &mut out[..]);
            black_box(&out);
        });
        let mut leb = [0u8; Gdid::VARINT_MAX_LEN];
        let mut compact = [0u8; Gdid::VARINT_MAX_LEN];
        id.write_leb(&mut leb).expect("room");
        id.write_compact(&mut compact).expect("room");
        assert_no_alloc("decode_leb/decode_compact", || {
            assert_eq!(Gdid::decode_leb(black_box(&leb)), Ok((id, leb_len)));
            assert_eq!(
                Gdid::decode_compact(black_box(&compact)),
                Ok((id, compact_len))
            );
            black_box(Gdid::decode_leb(black_box(&leb[..leb_len - 1]))).ok();
            black_box(Gdid::decode_leb(black_box(&[0x85, 0x00, 0x01]))).ok();
        });
    }
}

#[test]
fn elink_into_a_stack_buffer_and_back_does_not_allocate() {
    for id in ids() {
        let mut buf = [0u8; Gdid::ELINK_MAX_LEN];
        let text = id.to_elink(0);
        assert_no_alloc("encode_elink/from_elink", || {
            assert_eq!(id.encode_elink(0, &mut buf), text);
            assert_eq!(Gdid::from_elink(black_box(&text)), Ok(id));
        });
    }
}
