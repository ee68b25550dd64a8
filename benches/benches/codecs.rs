//! Codec benchmarks: gdid side by side with uuid, bson `ObjectId` and ulid, in one run.
//!
//! Groups (ids are `group/function/parameter`):
//!
//! - `format`: id to text (stack buffer where the crate offers one, `String` otherwise);
//! - `parse`: text to id, including two error paths; gdid and uuid through `try_parse`/`parse_str`
//!   and through `FromStr`;
//! - `bytes`: the fixed binary forms of gdid (12 bytes) and uuid (16 bytes); `*_from_slice` stores
//!   the whole `Result` through `black_box`, `*_from_slice_to/into_bytes` only the bytes,
//!   `*_from_bytes` builds the id from an array;
//! - `varint`: gdid `leb` and `compact`, next to a minimal hand-written canonical LEB128 codec of
//!   the same two values (u32 era, u64) and to the raw `leb128` crate calls, so that the cost of
//!   the `leb128` crate and of the gdid wrapper around it can be told apart;
//! - `elink`: the NFX/Azos ELink form (two-letter syllables): encode into a stack buffer and into a
//!   `String`, with and without metadata; decode (id only, and id with metadata), two error paths,
//!   and `Gdid::parse_any` on an ELink against the strict colon parser.
//!
//! Run: `cargo bench -p gdid-benches --bench codecs`. Inputs are built outside `iter` and passed
//! through `black_box`; outputs are `black_box`ed.

use std::fmt::Write as _;
use std::hint::black_box;
use std::str::FromStr as _;

use bson::oid::ObjectId;
use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, BenchmarkId, Criterion, criterion_group, criterion_main};
use gdid_core::{ELink, Gdid};
use ulid::Ulid;
use uuid::Uuid;

/// A typical id (short decimal fields).
const GDID_TYPICAL: &str = "1293:3:57";
/// The longest colon form (`Gdid::MAX`).
const GDID_LONG: &str = "4294967295:15:1152921504606846975";
/// The hex form of `GDID_TYPICAL`.
const GDID_HEX: &str = "0000050d3000000000000039";
/// `GDID_HEX` with the `0x` prefix.
const GDID_HEX_0X: &str = "0x0000050d3000000000000039";
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

/// The benchmarks of one group with one parameter (`group/function/parameter`). Inputs are passed
/// through `black_box`, and outputs `black_box`ed.
struct Bench<'a, 'c> {
    group: &'a mut BenchmarkGroup<'c, WallTime>,
    parameter: &'a str,
}

impl<'a, 'c> Bench<'a, 'c> {
    fn new(group: &'a mut BenchmarkGroup<'c, WallTime>, parameter: &'a str) -> Self {
        Bench { group, parameter }
    }

    /// Times `call` on `input`.
    ///
    /// The output stays where `call` wrote it; only its address goes through `black_box`.
    /// Moving it into `black_box` (`black_box(call(..))`, then `Bencher::iter`'s own) copied
    /// every result between stack slots with loads of other widths than the stores that wrote
    /// it (a `Result` holding the byte-aligned 12-byte `Gdid`). The CPU cannot forward such
    /// stores, and that stall, most of the `perf record` samples of `parse/gdid_hex` and
    /// `varint/gdid_leb_decode`, was timed as part of the codec.
    fn time<I: ?Sized, O>(&mut self, function: &str, input: &I, call: impl Fn(&I) -> O) {
        let id = BenchmarkId::new(function, self.parameter);
        self.group.bench_with_input(id, input, |b, input| {
            b.iter(|| {
                let output = call(black_box(input));
                black_box(&output);
            });
        });
    }

    /// Times `call` on `input`, writing into `buffer` (made outside the timing); `call`
    /// `black_box`es what it wrote.
    fn time_into<I: ?Sized, B: Clone>(
        &mut self,
        function: &str,
        input: &I,
        buffer: &B,
        call: impl Fn(&I, &mut B),
    ) {
        let id = BenchmarkId::new(function, self.parameter);
        self.group.bench_with_input(id, input, |b, input| {
            let mut buffer = buffer.clone();
            b.iter(|| call(black_box(input), &mut buffer));
        });
    }
}

fn format(c: &mut Criterion) {
    let mut group = c.benchmark_group("format");

    for (label, id) in [("typical", gdid(GDID_TYPICAL)), ("long", Gdid::MAX)] {
        let mut bench = Bench::new(&mut group, label);
        let buffer = [0u8; Gdid::TEXT_MAX_LEN];
        bench.time_into("gdid_colon_encode_text", &id, &buffer, |id, buf| {
            black_box(id.encode_text(buf));
        });
        let out = String::with_capacity(64);
        bench.time_into("gdid_colon_write_string", &id, &out, |id, out| {
            out.clear();
            write!(out, "{id}").expect("writing to a String cannot fail");
            black_box(out.as_str());
        });
    }

    let id = gdid(GDID_TYPICAL);
    let buffer = [0u8; Gdid::HEX_LEN];
    let mut bench = Bench::new(&mut group, "24_digits");
    bench.time_into("gdid_hex_encode_hex_lower", &id, &buffer, |id, buf| {
        black_box(id.encode_hex_lower(buf));
    });
    let id = ObjectId::parse_str(OID_TEXT).expect("valid ObjectId");
    bench.time("bson_oid_to_hex_alloc", &id, |id| id.to_hex());
    bench.time_into(
        "bson_oid_hex_encode_to_slice",
        &id,
        &[0u8; 24],
        |id, buf| {
            hex::encode_to_slice(id.bytes(), buf).expect("24 bytes hold 12 bytes of hex");
            black_box(&buf);
        },
    );

    let id = uuid();
    let buffer = Uuid::encode_buffer();
    let mut bench = Bench::new(&mut group, "36_chars");
    bench.time_into("uuid_hyphenated_encode_lower", &id, &buffer, |id, buf| {
        black_box(id.hyphenated().encode_lower(buf));
    });
    let out = String::with_capacity(64);
    bench.time_into("uuid_display_write_string", &id, &out, |id, out| {
        out.clear();
        write!(out, "{id}").expect("writing to a String cannot fail");
        black_box(out.as_str());
    });

    let id = Ulid::from_string(ULID_TEXT).expect("valid ulid");
    let buffer = [0u8; ulid::ULID_LEN];
    let mut bench = Bench::new(&mut group, "26_chars");
    bench.time_into("ulid_array_to_str", &id, &buffer, |id, buf| {
        black_box(id.array_to_str(buf));
    });
    bench.time("ulid_to_string_alloc", &id, Ulid::to_string);

    group.finish();
}

fn parse(c: &mut Criterion) {
    let mut group = c.benchmark_group("parse");

    assert!(Gdid::try_parse(GDID_INVALID).is_err());
    for (function, label, input) in [
        ("gdid_colon", "typical", GDID_TYPICAL),
        ("gdid_colon", "long", GDID_LONG),
        ("gdid_hex", "24_digits", GDID_HEX),
    ] {
        let mut bench = Bench::new(&mut group, label);
        bench.time(function, input, Gdid::try_parse);
        // Through `FromStr` (`str::parse`), as most code calls it.
        bench.time(&format!("{function}_from_str"), input, Gdid::from_str);
    }
    let mut bench = Bench::new(&mut group, "authority_18");
    bench.time("gdid_colon_error", GDID_INVALID, Gdid::try_parse);
    // The `0x` hex form.
    let mut bench = Bench::new(&mut group, "0x_24_digits");
    bench.time("gdid_hex_from_str", GDID_HEX_0X, Gdid::from_str);
    Bench::new(&mut group, "hyphenated").time("uuid_from_str", UUID_TEXT, Uuid::from_str);
    assert!(Uuid::parse_str(UUID_INVALID).is_err());
    for (function, label, input) in [
        ("uuid_parse_str", "hyphenated", UUID_TEXT),
        ("uuid_parse_str_error", "bad_last_char", UUID_INVALID),
    ] {
        Bench::new(&mut group, label).time(function, input, Uuid::parse_str);
    }
    let mut bench = Bench::new(&mut group, "24_digits");
    bench.time("bson_oid_parse_str", OID_TEXT, |text| {
        ObjectId::parse_str(text)
    });
    let mut bench = Bench::new(&mut group, "26_chars");
    bench.time("ulid_from_string", ULID_TEXT, Ulid::from_string);

    group.finish();
}

/// The benchmarks of a fixed binary form of `$len` bytes: the `$id` of type `$type` read from a
/// slice, turned into its bytes (by `$to`, by value), copied from a borrow, and the round trip as
/// code uses it (`from_slice(..)?` then the bytes: no `Result` is stored).
macro_rules! time_bytes {
    ($group:expr, $kind:literal, $type:ty, $id:expr, $to:ident, $len:literal) => {{
        let id: $type = $id;
        let raw = id.$to();
        let mut bench = Bench::new($group, concat!($len, "_bytes"));
        bench.time(concat!($kind, "_from_slice"), &raw[..], <$type>::from_slice);
        bench.time(concat!($kind, "_from_bytes"), &raw, |raw| {
            <$type>::from_bytes(*raw)
        });
        bench.time(concat!($kind, "_", stringify!($to)), &id, |id| id.$to());
        bench.time(concat!($kind, "_as_bytes_copy"), &id, |id| *id.as_bytes());
        let name = concat!($kind, "_from_slice_", stringify!($to));
        bench.time(name, &raw[..], |raw| {
            <$type>::from_slice(raw).map_or([0; $len], <$type>::$to)
        });
    }};
}

fn bytes(c: &mut Criterion) {
    let mut group = c.benchmark_group("bytes");
    time_bytes!(&mut group, "gdid", Gdid, gdid(GDID_TYPICAL), to_bytes, 12);
    time_bytes!(&mut group, "uuid", Uuid, uuid(), into_bytes, 16);
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

/// Reads the era and the packed value (as the `leb128` crate baseline does); returns them and
/// the bytes read.
#[inline(never)]
fn hand_decode(input: &[u8]) -> Result<(u32, u64, usize), HandError> {
    let (era, at) = hand_get(input, 0)?;
    let era = u32::try_from(era).map_err(|_| HandError::Overflow)?;
    let (packed, end) = hand_get(input, at)?;
    Ok((era, packed, end))
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
            assert_eq!(
                hand_decode(&expected),
                Ok((id.era(), form.pack(&id), expected.len()))
            );
            assert_eq!(
                crate_read(&expected),
                Some((u64::from(id.era()), form.pack(&id)))
            );
            for cut in 0..expected.len() {
                assert_eq!(hand_decode(&expected[..cut]), Err(HandError::Truncated));
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
        assert_eq!(hand_decode(input), Err(error), "{input:02x?}");
        assert!(Gdid::decode_leb(input).is_err());
    }
    let mut max = vec![0x00];
    max.extend([0xff; 9]);
    max.push(0x01);
    assert_eq!(hand_decode(&max), Ok((0, u64::MAX, 11)));
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

            let input = encoded.as_slice();
            let buffer = [0u8; Gdid::VARINT_MAX_LEN];
            let mut bench = Bench::new(&mut group, &label);
            bench.time_into(&format!("gdid_{f}_write_stack"), &id, &buffer, |id, buf| {
                let n = gdid_write(form, id, buf);
                black_box(&buf[..n]);
            });
            let out = Vec::with_capacity(64);
            bench.time_into(&format!("gdid_{f}_encode_vec"), &id, &out, |id, out| {
                out.clear();
                match form {
                    Form::Leb => id.encode_leb(out),
                    Form::Compact => id.encode_compact(out),
                }
                black_box(out.as_slice());
            });
            bench.time(&format!("gdid_{f}_decode"), input, |input| match form {
                Form::Leb => Gdid::decode_leb(input),
                Form::Compact => Gdid::decode_compact(input),
            });

            bench.time_into(&format!("hand_{f}_write_stack"), &id, &buffer, |id, buf| {
                let n = hand_write(buf, id.era(), form.pack(id)).unwrap_or(0);
                black_box(&buf[..n]);
            });
            bench.time(&format!("hand_{f}_decode"), input, hand_decode);

            let name = format!("leb128_crate_{f}_write_raw");
            bench.time_into(&name, &id, &buffer, |id, buf| {
                let n = crate_write(buf, id.era(), form.pack(id));
                black_box(&buf[..n]);
            });
            bench.time(&format!("leb128_crate_{f}_read_raw"), input, crate_read);
        }
    }
    group.finish();
}

/// `1280:2:8902382` spelled with seed 0 (the upstream Azos test string).
const ELINK_TYPICAL: &str = "AUCKIR-ABASVITILT";
/// `1490109883:12:9831762982682` (upstream): a 4-byte era and a 6-byte counter.
const ELINK_LONG: &str = "CDHOAL-OKHIRAGNAFIPOMEP-UBBR";
/// `27:15:200100999666333000` with the metadata bytes `abc` (upstream).
const ELINK_METADATA: &str = "CHAGVU-ANHTUGIFNU-TVWETOUF-JOJKJU";
/// `ELINK_LONG` with one letter changed: the checksum does not match.
const ELINK_BAD_CHECKSUM: &str = "CDHOAL-OKHIRAGNAFIPOMEP-UBBA";
/// `XX` is not a syllable (upstream).
const ELINK_BAD_SYLLABLE: &str = "PYYEOP-XXYOIWUFOBSHAMNE-GOOX";

fn elink(c: &mut Criterion) {
    let mut group = c.benchmark_group("elink");

    for (label, text) in [
        ("typical", ELINK_TYPICAL),
        ("long", ELINK_LONG),
        ("max", ""),
    ] {
        let id = if text.is_empty() {
            Gdid::MAX
        } else {
            Gdid::from_elink(text).expect("valid ELink")
        };
        let mut bench = Bench::new(&mut group, label);
        let buffer = [0u8; Gdid::ELINK_MAX_LEN];
        bench.time_into("gdid_encode_elink_stack", &id, &buffer, |id, buf| {
            black_box(id.encode_elink(0, buf));
        });
        bench.time("gdid_to_elink_string", &id, |id| id.to_elink(0));
        let text = id.to_elink(0);
        bench.time("gdid_from_elink", text.as_str(), Gdid::from_elink);
        bench.time("elink_decode", text.as_str(), ELink::decode);
    }

    let link = ELink::decode(ELINK_METADATA).expect("valid ELink");
    assert_eq!(link.metadata(), b"abc");
    let mut bench = Bench::new(&mut group, "metadata_3B");
    bench.time("elink_encode_string", &link, |link| link.encode(1));
    let out = String::with_capacity(64);
    bench.time_into("elink_encode_into", &link, &out, |link, out| {
        out.clear();
        link.encode_into(1, out);
        black_box(out.as_str());
    });
    bench.time("elink_decode", ELINK_METADATA, ELink::decode);
    bench.time("gdid_from_elink", ELINK_METADATA, Gdid::from_elink);

    assert!(Gdid::from_elink(ELINK_BAD_CHECKSUM).is_err());
    assert!(Gdid::from_elink(ELINK_BAD_SYLLABLE).is_err());
    for (label, input) in [
        ("bad_checksum", ELINK_BAD_CHECKSUM),
        ("bad_syllable", ELINK_BAD_SYLLABLE),
    ] {
        Bench::new(&mut group, label).time("gdid_from_elink_error", input, Gdid::from_elink);
    }

    let mut bench = Bench::new(&mut group, "typical");
    bench.time("gdid_parse_any", ELINK_TYPICAL, Gdid::parse_any);
    bench.time("gdid_parse_any_colon", "1280:2:8902382", Gdid::parse_any);
    bench.time("gdid_try_parse_colon", "1280:2:8902382", Gdid::try_parse);

    group.finish();
}

criterion_group!(benches, format, parse, bytes, varint, elink);
criterion_main!(benches);
