//! Codec benchmarks: gdid side by side with uuid, bson `ObjectId` and ulid, in one run.
//!
//! Groups (ids are `group/function/parameter`):
//!
//! - `format`: id to text (stack buffer where the crate offers one, `String` otherwise);
//! - `parse`: text to id, including two error paths;
//! - `bytes`: the fixed binary forms of gdid (12 bytes) and uuid (16 bytes); `*_from_slice` stores
//!   the whole `Result` through `black_box`, `*_from_slice_to/into_bytes` only the bytes;
//! - `varint`: gdid `leb` and `compact`, next to a minimal hand-written canonical LEB128 codec of
//!   the same two values (u32 era, u64) and to the raw `leb128` crate calls, so that the cost of
//!   the `leb128` crate and of the gdid wrapper around it can be told apart.
//!
//! Run: `cargo bench -p gdid-benches --bench codecs`. Inputs are built outside `iter` and passed
//! through `black_box`; outputs are `black_box`ed.

use std::fmt::Write as _;
use std::hint::black_box;

use bson::oid::ObjectId;
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use gdid_core::{COUNTER_MAX, Gdid};
use ulid::Ulid;
use uuid::Uuid;

/// A typical id (short decimal fields).
const GDID_TYPICAL: &str = "1293:3:57";
/// The longest colon form (`Gdid::MAX`).
const GDID_LONG: &str = "4294967295:15:1152921504606846975";
/// The hex form of `GDID_TYPICAL`.
const GDID_HEX: &str = "0000050d3000000000000039";
/// Authority 18 is out of range.
const GDID_INVALID: &str = "1:18:3";
const UUID_TEXT: &str = "67e55044-10b1-426f-9247-bb680e5fe0c8";
/// The last character is not a hex digit.
const UUID_INVALID: &str = "67e55044-10b1-426f-9247-bb680e5fe0cz";
const OID_TEXT: &str = "507f1f77bcf86cd799439011";
const ULID_TEXT: &str = "01D39ZY06FGSCTVN4T2V9PKHFZ";

fn gdid(text: &str) -> Gdid {
    Gdid::try_parse(text).expect("valid gdid")
}

fn uuid() -> Uuid {
    Uuid::parse_str(UUID_TEXT).expect("valid uuid")
}

fn format(c: &mut Criterion) {
    let mut group = c.benchmark_group("format");

    for (label, id) in [("typical", gdid(GDID_TYPICAL)), ("long", Gdid::MAX)] {
        group.bench_with_input(
            BenchmarkId::new("gdid_colon_encode_text", label),
            &id,
            |b, id| {
                let mut buf = [0u8; Gdid::TEXT_MAX_LEN];
                b.iter(|| {
                    black_box(black_box(id).encode_text(&mut buf));
                });
            },
        );
        group.bench_with_input(
            BenchmarkId::new("gdid_colon_write_string", label),
            &id,
            |b, id| {
                let mut out = String::with_capacity(64);
                b.iter(|| {
                    out.clear();
                    write!(out, "{}", black_box(id)).expect("writing to a String cannot fail");
                    black_box(out.as_str());
                });
            },
        );
    }

    let id = gdid(GDID_TYPICAL);
    group.bench_with_input(
        BenchmarkId::new("gdid_hex_encode_hex_lower", "24_digits"),
        &id,
        |b, id| {
            let mut buf = [0u8; Gdid::HEX_LEN];
            b.iter(|| {
                black_box(black_box(id).encode_hex_lower(&mut buf));
            });
        },
    );

    let id = uuid();
    group.bench_with_input(
        BenchmarkId::new("uuid_hyphenated_encode_lower", "36_chars"),
        &id,
        |b, id| {
            let mut buf = Uuid::encode_buffer();
            b.iter(|| {
                black_box(black_box(*id).hyphenated().encode_lower(&mut buf));
            });
        },
    );

    let id = ObjectId::parse_str(OID_TEXT).expect("valid ObjectId");
    group.bench_with_input(
        BenchmarkId::new("bson_oid_to_hex_alloc", "24_digits"),
        &id,
        |b, id| b.iter(|| black_box(black_box(*id).to_hex())),
    );
    group.bench_with_input(
        BenchmarkId::new("bson_oid_hex_encode_to_slice", "24_digits"),
        &id,
        |b, id| {
            let mut buf = [0u8; 24];
            b.iter(|| {
                hex::encode_to_slice(black_box(id).bytes(), &mut buf)
                    .expect("24 bytes hold 12 bytes of hex");
                black_box(&buf);
            });
        },
    );

    let id = Ulid::from_string(ULID_TEXT).expect("valid ulid");
    group.bench_with_input(
        BenchmarkId::new("ulid_array_to_str", "26_chars"),
        &id,
        |b, id| {
            let mut buf = [0u8; ulid::ULID_LEN];
            b.iter(|| {
                black_box(black_box(id).array_to_str(&mut buf));
            });
        },
    );
    group.bench_with_input(
        BenchmarkId::new("ulid_to_string_alloc", "26_chars"),
        &id,
        |b, id| b.iter(|| black_box(black_box(id).to_string())),
    );

    group.finish();
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");

    for (function, label, input) in [
        ("gdid_colon", "typical", GDID_TYPICAL),
        ("gdid_colon", "long", GDID_LONG),
        ("gdid_hex", "24_digits", GDID_HEX),
    ] {
        group.bench_with_input(BenchmarkId::new(function, label), input, |b, input| {
            b.iter(|| black_box(Gdid::try_parse(black_box(input))));
        });
    }
    group.bench_with_input(
        BenchmarkId::new("gdid_colon_error", "authority_18"),
        GDID_INVALID,
        |b, input| {
            assert!(Gdid::try_parse(input).is_err());
            b.iter(|| black_box(Gdid::try_parse(black_box(input))));
        },
    );

    group.bench_with_input(
        BenchmarkId::new("uuid_parse_str", "hyphenated"),
        UUID_TEXT,
        |b, input| b.iter(|| black_box(Uuid::parse_str(black_box(input)))),
    );
    group.bench_with_input(
        BenchmarkId::new("uuid_parse_str_error", "bad_last_char"),
        UUID_INVALID,
        |b, input| {
            assert!(Uuid::parse_str(input).is_err());
            b.iter(|| black_box(Uuid::parse_str(black_box(input))));
        },
    );
    group.bench_with_input(
        BenchmarkId::new("bson_oid_parse_str", "24_digits"),
        OID_TEXT,
        |b, input| b.iter(|| black_box(ObjectId::parse_str(black_box(input)))),
    );
    group.bench_with_input(
        BenchmarkId::new("ulid_from_string", "26_chars"),
        ULID_TEXT,
        |b, input| b.iter(|| black_box(Ulid::from_string(black_box(input)))),
    );

    group.finish();
}

fn bytes(c: &mut Criterion) {
    let mut group = c.benchmark_group("bytes");

    let id = gdid(GDID_TYPICAL);
    let raw = id.to_bytes();
    group.bench_with_input(
        BenchmarkId::new("gdid_from_slice", "12_bytes"),
        &raw[..],
        |b, raw| b.iter(|| black_box(Gdid::from_slice(black_box(raw)))),
    );
    group.bench_with_input(
        BenchmarkId::new("gdid_to_bytes", "12_bytes"),
        &id,
        |b, id| {
            b.iter(|| black_box(black_box(id).to_bytes()));
        },
    );
    group.bench_with_input(
        BenchmarkId::new("gdid_as_bytes_copy", "12_bytes"),
        &id,
        |b, id| b.iter(|| black_box(*black_box(id).as_bytes())),
    );
    // The round trip as code uses it (`from_slice(..)?` then the bytes): no `Result` is stored.
    group.bench_with_input(
        BenchmarkId::new("gdid_from_slice_to_bytes", "12_bytes"),
        &raw[..],
        |b, raw| {
            b.iter(|| black_box(Gdid::from_slice(black_box(raw)).map_or([0; 12], Gdid::to_bytes)));
        },
    );

    let id = uuid();
    let raw = id.into_bytes();
    group.bench_with_input(
        BenchmarkId::new("uuid_from_slice", "16_bytes"),
        &raw[..],
        |b, raw| b.iter(|| black_box(Uuid::from_slice(black_box(raw)))),
    );
    group.bench_with_input(
        BenchmarkId::new("uuid_into_bytes", "16_bytes"),
        &id,
        |b, id| b.iter(|| black_box(black_box(*id).into_bytes())),
    );
    group.bench_with_input(
        BenchmarkId::new("uuid_as_bytes_copy", "16_bytes"),
        &id,
        |b, id| b.iter(|| black_box(*black_box(id).as_bytes())),
    );
    group.bench_with_input(
        BenchmarkId::new("uuid_from_slice_into_bytes", "16_bytes"),
        &raw[..],
        |b, raw| {
            b.iter(|| {
                black_box(Uuid::from_slice(black_box(raw)).map_or([0; 16], Uuid::into_bytes))
            });
        },
    );

    group.finish();
}

// ---------------------------------------------------------------------------------------------
// Minimal hand-written canonical LEB128 (the yardstick for the `leb128` crate).
// Same contract as gdid: nothing written to a short buffer; the decoder rejects truncated,
// overlong (non-canonical) and overflowing input, and reports the bytes consumed.
// The entry points are `#[inline(never)]`, like gdid-core's (non-generic, not `#[inline]`, so
// not inlined across crates): every contender pays one call, none is folded into the loop.
// ---------------------------------------------------------------------------------------------

/// The two ways gdid packs its low 64 bits; the era is always the first value.
#[derive(Clone, Copy)]
enum Form {
    Leb,
    Compact,
}

impl Form {
    const fn name(self) -> &'static str {
        match self {
            Form::Leb => "leb",
            Form::Compact => "compact",
        }
    }

    const fn pack(self, id: &Gdid) -> u64 {
        match self {
            Form::Leb => id.id64(),
            Form::Compact => (id.counter() << 4) | id.authority() as u64,
        }
    }

    const fn unpack(self, era: u32, packed: u64) -> Gdid {
        match self {
            Form::Leb => Gdid::from_raw(era, packed),
            Form::Compact => Gdid::from_raw(
                era,
                ((packed & 0xf) << Gdid::COUNTER_BITS) | ((packed >> 4) & COUNTER_MAX),
            ),
        }
    }
}

/// Why the hand-written decoder refused its input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HandError {
    Truncated,
    NonCanonical,
    Overflow,
}

/// Bytes of the unsigned LEB128 of `value`.
const fn hand_len(value: u64) -> usize {
    let bits = 64 - (value | 1).leading_zeros();
    bits.div_ceil(7) as usize
}

/// Writes `value` at `out[at..]`, which the caller checked is long enough; returns the new end.
#[inline]
fn hand_put(out: &mut [u8], mut at: usize, mut value: u64) -> usize {
    while value >= 0x80 {
        out[at] = value.to_le_bytes()[0] | 0x80;
        value >>= 7;
        at += 1;
    }
    out[at] = value.to_le_bytes()[0];
    at + 1
}

/// Writes era then `packed`; `None` (nothing written) when `out` is too short.
#[inline(never)]
fn hand_write(out: &mut [u8], era: u32, packed: u64) -> Option<usize> {
    if out.len() < hand_len(u64::from(era)) + hand_len(packed) {
        return None;
    }
    let at = hand_put(out, 0, u64::from(era));
    Some(hand_put(out, at, packed))
}

/// Reads one canonical unsigned LEB128 at `input[at..]`; returns the value and the new position.
#[inline]
fn hand_get(input: &[u8], mut at: usize) -> Result<(u64, usize), HandError> {
    let start = at;
    let mut value = 0u64;
    let mut shift = 0u32;
    loop {
        let Some(&byte) = input.get(at) else {
            return Err(HandError::Truncated);
        };
        at += 1;
        // The 10th byte holds bit 63 only.
        if shift == 63 && byte > 1 {
            return Err(HandError::Overflow);
        }
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            // A last byte of zero is an overlong encoding (except for the value 0 itself).
            if byte == 0 && at - start > 1 {
                return Err(HandError::NonCanonical);
            }
            return Ok((value, at));
        }
        shift += 7;
    }
}

#[inline(never)]
fn hand_decode(form: Form, input: &[u8]) -> Result<(Gdid, usize), HandError> {
    let (era, at) = hand_get(input, 0)?;
    let era = u32::try_from(era).map_err(|_| HandError::Overflow)?;
    let (packed, end) = hand_get(input, at)?;
    Ok((form.unpack(era, packed), end))
}

/// The bare `leb128` crate calls gdid-core makes, without its length pre-check or canonical check.
#[inline(never)]
fn crate_write(out: &mut [u8], era: u32, packed: u64) -> usize {
    let mut writer = out;
    let a = leb128::write::unsigned(&mut writer, u64::from(era)).unwrap_or(0);
    let b = leb128::write::unsigned(&mut writer, packed).unwrap_or(0);
    a + b
}

#[inline(never)]
fn crate_read(input: &[u8]) -> Option<(u64, u64)> {
    let mut reader = input;
    let era = leb128::read::unsigned(&mut reader).ok()?;
    let packed = leb128::read::unsigned(&mut reader).ok()?;
    Some((era, packed))
}

fn gdid_write(form: Form, id: &Gdid, out: &mut [u8]) -> usize {
    match form {
        Form::Leb => id.write_leb(out),
        Form::Compact => id.write_compact(out),
    }
    .expect("VARINT_MAX_LEN holds every encoding")
}

fn gdid_encoded(form: Form, id: &Gdid) -> Vec<u8> {
    let mut out = Vec::new();
    match form {
        Form::Leb => id.encode_leb(&mut out),
        Form::Compact => id.encode_compact(&mut out),
    }
    out
}

/// The hand-written codec and the crate baselines agree with gdid-core before anything is timed.
fn check_hand_written(ids: &[(&str, Gdid)]) {
    for &(_, id) in ids {
        for form in [Form::Leb, Form::Compact] {
            let expected = gdid_encoded(form, &id);
            let mut buf = [0u8; Gdid::VARINT_MAX_LEN];
            let n = hand_write(&mut buf, id.era(), form.pack(&id)).expect("room");
            assert_eq!(&buf[..n], expected.as_slice());
            assert!(hand_write(&mut buf[..n - 1], id.era(), form.pack(&id)).is_none());
            let n = crate_write(&mut buf, id.era(), form.pack(&id));
            assert_eq!(&buf[..n], expected.as_slice());
            assert_eq!(hand_decode(form, &expected), Ok((id, expected.len())));
            assert_eq!(
                crate_read(&expected),
                Some((u64::from(id.era()), form.pack(&id)))
            );
            for cut in 0..expected.len() {
                assert_eq!(
                    hand_decode(form, &expected[..cut]),
                    Err(HandError::Truncated)
                );
            }
        }
    }
    // The same refusals as gdid-core.
    for (input, error) in [
        (&[0x85, 0x00, 0x01][..], HandError::NonCanonical),
        (&[0x00, 0x80, 0x00][..], HandError::NonCanonical),
        (
            &[0x80, 0x80, 0x80, 0x80, 0x10, 0x00][..],
            HandError::Overflow,
        ),
        (
            &[
                0x00, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02,
            ][..],
            HandError::Overflow,
        ),
    ] {
        assert_eq!(hand_decode(Form::Leb, input), Err(error), "{input:02x?}");
        assert!(Gdid::decode_leb(input).is_err());
    }
    let mut max = vec![0x00];
    max.extend([0xff; 9]);
    max.push(0x01);
    assert_eq!(
        hand_decode(Form::Leb, &max),
        Ok((Gdid::from_raw(0, u64::MAX), 11))
    );
}

fn varint(c: &mut Criterion) {
    let ids = [
        ("small_a0", Gdid::from_parts(5, 0, 123).expect("valid")),
        ("small_a3", Gdid::from_parts(5, 3, 123).expect("valid")),
        (
            "big",
            Gdid::from_parts(1_000_000, 15, 1 << 59).expect("valid"),
        ),
    ];
    check_hand_written(&ids);

    let mut group = c.benchmark_group("varint");
    for form in [Form::Leb, Form::Compact] {
        let f = form.name();
        for &(label, id) in &ids {
            let encoded = gdid_encoded(form, &id);
            let label = format!("{label}_{}B", encoded.len());

            group.bench_with_input(
                BenchmarkId::new(format!("gdid_{f}_write_stack"), &label),
                &id,
                |b, id| {
                    let mut buf = [0u8; Gdid::VARINT_MAX_LEN];
                    b.iter(|| {
                        let n = gdid_write(form, black_box(id), &mut buf);
                        black_box(&buf[..n]);
                    });
                },
            );
            group.bench_with_input(
                BenchmarkId::new(format!("gdid_{f}_encode_vec"), &label),
                &id,
                |b, id| {
                    let mut out = Vec::with_capacity(64);
                    b.iter(|| {
                        out.clear();
                        match form {
                            Form::Leb => black_box(id).encode_leb(&mut out),
                            Form::Compact => black_box(id).encode_compact(&mut out),
                        }
                        black_box(out.as_slice());
                    });
                },
            );
            group.bench_with_input(
                BenchmarkId::new(format!("gdid_{f}_decode"), &label),
                encoded.as_slice(),
                |b, input| {
                    b.iter(|| {
                        black_box(match form {
                            Form::Leb => Gdid::decode_leb(black_box(input)),
                            Form::Compact => Gdid::decode_compact(black_box(input)),
                        })
                    });
                },
            );

            group.bench_with_input(
                BenchmarkId::new(format!("hand_{f}_write_stack"), &label),
                &id,
                |b, id| {
                    let mut buf = [0u8; Gdid::VARINT_MAX_LEN];
                    b.iter(|| {
                        let id = black_box(id);
                        let n = hand_write(&mut buf, id.era(), form.pack(id)).unwrap_or(0);
                        black_box(&buf[..n]);
                    });
                },
            );
            group.bench_with_input(
                BenchmarkId::new(format!("hand_{f}_decode"), &label),
                encoded.as_slice(),
                |b, input| b.iter(|| black_box(hand_decode(form, black_box(input)))),
            );

            group.bench_with_input(
                BenchmarkId::new(format!("leb128_crate_{f}_write_raw"), &label),
                &id,
                |b, id| {
                    let mut buf = [0u8; Gdid::VARINT_MAX_LEN];
                    b.iter(|| {
                        let id = black_box(id);
                        let n = crate_write(&mut buf, id.era(), form.pack(id));
                        black_box(&buf[..n]);
                    });
                },
            );
            group.bench_with_input(
                BenchmarkId::new(format!("leb128_crate_{f}_read_raw"), &label),
                encoded.as_slice(),
                |b, input| b.iter(|| black_box(crate_read(black_box(input)))),
            );
        }
    }
    group.finish();
}

criterion_group!(benches, format, parse, bytes, varint);
criterion_main!(benches);
