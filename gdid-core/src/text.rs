//! The text forms: `era:authority:counter` and 24 hex digits.
//!
//! Parsing is a `const fn` over bytes: no allocation, one pass, and the error carries the field,
//! the byte index and the offending character. Formatting writes into stack buffers.

use core::fmt;
use core::str::FromStr;

use crate::error::{Field, ParseError};
use crate::gdid::{AUTHORITY_MAX, COUNTER_MAX, Gdid};

/// Number of hex digits in the hex form.
const HEX_DIGITS: usize = 2 * Gdid::SIZE;

/// Maps an ASCII byte to its hex value; `0xff` for anything that is not a hex digit.
const HEX_VALUES: [u8; 256] = {
    let mut table = [0xff_u8; 256];
    let mut digit = 0u8;
    while digit < 10 {
        table[(b'0' + digit) as usize] = digit;
        digit += 1;
    }
    let mut letter = 0u8;
    while letter < 6 {
        table[(b'a' + letter) as usize] = 10 + letter;
        table[(b'A' + letter) as usize] = 10 + letter;
        letter += 1;
    }
    table
};

/// `"00" "01" … "99"`: two decimal digits per lookup.
const DIGIT_PAIRS: &[u8; 200] = b"\
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899";

const LOWER_DIGITS: &[u8; 16] = b"0123456789abcdef";
const UPPER_DIGITS: &[u8; 16] = b"0123456789ABCDEF";

impl Gdid {
    /// Longest colon form: `4294967295:15:1152921504606846975`.
    pub const TEXT_MAX_LEN: usize = 10 + 1 + 2 + 1 + 19;
    /// Length of the hex form without prefix.
    pub const HEX_LEN: usize = HEX_DIGITS;

    /// Parses the colon form or the hex form, in a `const` context too.
    ///
    /// - Colon form (the input contains `:`): exactly three segments `era:authority:counter`,
    ///   each non-empty, decimal digits only (no sign), optionally surrounded by ASCII whitespace;
    ///   era ≤ `u32::MAX`, authority ≤ 15, counter ≤ `COUNTER_MAX`.
    /// - Hex form: after trimming ASCII whitespace, an optional `0x`/`0X` then exactly 24 hex digits
    ///   of either case (the 12-byte form).
    ///
    /// # Errors
    ///
    /// A [`ParseError`] naming the field, the byte index and the expected form.
    ///
    /// # Examples
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// const ID: Gdid = match Gdid::try_parse("1293:3:57") {
    ///     Ok(id) => id,
    ///     Err(_) => panic!("not a GDID"),
    /// };
    /// assert_eq!(Gdid::try_parse(" 31 : 2:  3123 ").unwrap().counter(), 3123);
    /// assert_eq!(Gdid::try_parse("0x0000050D3000000000000039"), Ok(ID));
    /// assert_eq!(
    ///     Gdid::try_parse("1:18:3").unwrap_err().to_string(),
    ///     "the authority segment at byte 2 is out of range: the maximum is 15"
    /// );
    /// ```
    pub const fn try_parse(input: &str) -> Result<Gdid, ParseError> {
        let bytes = input.as_bytes();
        let mut colons = [0usize; 2];
        let mut count = 0;
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] == b':' {
                if count < 2 {
                    colons[count] = i;
                }
                count += 1;
            }
            i += 1;
        }
        match count {
            0 => parse_hex(bytes),
            2 => parse_colon(bytes, colons[0], colons[1]),
            _ => Err(ParseError::SegmentCount { found: count + 1 }),
        }
    }

    /// Writes the colon form into `buf` and returns it as a `&str`; never allocates.
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// let mut buf = [0u8; Gdid::TEXT_MAX_LEN];
    /// assert_eq!(Gdid::MAX.encode_text(&mut buf), "4294967295:15:1152921504606846975");
    /// ```
    pub fn encode_text<'b>(&self, buf: &'b mut [u8; Gdid::TEXT_MAX_LEN]) -> &'b str {
        // Right to left, straight into `buf`: no scratch buffers to copy from.
        let mut start = write_decimal(buf, Gdid::TEXT_MAX_LEN, self.counter());
        start -= 1;
        buf[start] = b':';
        start = write_decimal(buf, start, u64::from(self.authority()));
        start -= 1;
        buf[start] = b':';
        start = write_decimal(buf, start, u64::from(self.era()));
        ascii(&buf[start..])
    }

    /// Writes the 24 lowercase hex digits of the 12-byte form into `buf`; never allocates.
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// let mut buf = [0u8; Gdid::HEX_LEN];
    /// let id = Gdid::from_parts(0, 1, 0x4b).unwrap();
    /// assert_eq!(id.encode_hex_lower(&mut buf), "00000000100000000000004b");
    /// ```
    pub fn encode_hex_lower<'b>(&self, buf: &'b mut [u8; Gdid::HEX_LEN]) -> &'b str {
        write_hex(&self.0, buf, LOWER_DIGITS);
        ascii(buf)
    }

    /// Writes the 24 uppercase hex digits of the 12-byte form into `buf`; never allocates.
    pub fn encode_hex_upper<'b>(&self, buf: &'b mut [u8; Gdid::HEX_LEN]) -> &'b str {
        write_hex(&self.0, buf, UPPER_DIGITS);
        ascii(buf)
    }
}

/// Parses `GDID` literals at compile time.
///
/// ```
/// use gdid_core::{gdid, Gdid};
///
/// const ROOT: Gdid = gdid!("0:0:1");
/// assert_eq!(ROOT.counter(), 1);
/// ```
///
/// An invalid literal is a compile error:
///
/// ```compile_fail
/// const BAD: gdid_core::Gdid = gdid_core::gdid!("1:16:1");
/// ```
#[macro_export]
macro_rules! gdid {
    ($text:expr) => {{
        const ID: $crate::Gdid = match $crate::Gdid::try_parse($text) {
            ::core::result::Result::Ok(id) => id,
            ::core::result::Result::Err(_) => ::core::panic!("invalid GDID literal"),
        };
        ID
    }};
}

#[inline(always)]
const fn parse_colon(bytes: &[u8], first: usize, second: usize) -> Result<Gdid, ParseError> {
    let era = match parse_segment(bytes, 0, first, Field::Era, u32::MAX as u64, 10) {
        Ok(v) => v,
        Err(e) => return Err(e),
    };
    let authority = match parse_segment(
        bytes,
        first + 1,
        second,
        Field::Authority,
        AUTHORITY_MAX as u64,
        2,
    ) {
        Ok(v) => v,
        Err(e) => return Err(e),
    };
    let counter = match parse_segment(
        bytes,
        second + 1,
        bytes.len(),
        Field::Counter,
        COUNTER_MAX,
        19,
    ) {
        Ok(v) => v,
        Err(e) => return Err(e),
    };
    // The segment bounds above make the narrowing exact.
    #[allow(clippy::cast_possible_truncation)]
    let id = Gdid::from_raw(era as u32, (authority << Gdid::COUNTER_BITS) | counter);
    Ok(id)
}

/// Parses `bytes[start..end]` as optionally-space-padded decimal digits no greater than `max`,
/// which has `max_digits` digits.
///
/// Three cheap passes instead of a checked multiply-add per digit: check the digits, skip leading
/// zeros and reject by digit count, then add up (19 digits always fit in a `u64`).
#[inline(always)]
const fn parse_segment(
    bytes: &[u8],
    start: usize,
    end: usize,
    field: Field,
    max: u64,
    max_digits: usize,
) -> Result<u64, ParseError> {
    let (digits_start, end) = trim(bytes, start, end);
    if digits_start == end {
        return Err(ParseError::EmptySegment {
            field,
            index: start,
        });
    }
    let mut i = digits_start;
    while i < end {
        if !bytes[i].is_ascii_digit() {
            return Err(ParseError::InvalidDigit {
                field,
                character: char_at(bytes, i),
                index: i,
            });
        }
        i += 1;
    }
    let out_of_range = ParseError::OutOfRange {
        field,
        index: digits_start,
        max,
    };
    let mut i = digits_start;
    while i + 1 < end && bytes[i] == b'0' {
        i += 1;
    }
    if end - i > max_digits {
        return Err(out_of_range);
    }
    let mut value: u64 = 0;
    while i < end {
        value = value * 10 + (bytes[i] - b'0') as u64;
        i += 1;
    }
    if value > max {
        return Err(out_of_range);
    }
    Ok(value)
}

#[inline(always)]
const fn parse_hex(bytes: &[u8]) -> Result<Gdid, ParseError> {
    let (mut start, end) = trim(bytes, 0, bytes.len());
    if start == end {
        return Err(ParseError::Empty);
    }
    if end - start >= 2 && bytes[start] == b'0' && (bytes[start + 1] | 0x20) == b'x' {
        start += 2;
    }
    if end - start != HEX_DIGITS {
        return Err(ParseError::HexLength { found: end - start });
    }
    let mut out = [0u8; Gdid::SIZE];
    let mut k = 0;
    while k < Gdid::SIZE {
        let i = start + 2 * k;
        let hi = HEX_VALUES[bytes[i] as usize];
        if hi == 0xff {
            return Err(invalid_hex(bytes, i));
        }
        let lo = HEX_VALUES[bytes[i + 1] as usize];
        if lo == 0xff {
            return Err(invalid_hex(bytes, i + 1));
        }
        out[k] = (hi << 4) | lo;
        k += 1;
    }
    Ok(Gdid::from_bytes(out))
}

const fn invalid_hex(bytes: &[u8], index: usize) -> ParseError {
    ParseError::InvalidHexDigit {
        character: char_at(bytes, index),
        index,
    }
}

/// Narrows `[start, end)` past ASCII whitespace on both sides.
#[inline(always)]
const fn trim(bytes: &[u8], mut start: usize, mut end: usize) -> (usize, usize) {
    while start < end && bytes[start].is_ascii_whitespace() {
        start += 1;
    }
    while end > start && bytes[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    (start, end)
}

/// Decodes the UTF-8 character that starts at `index` (a character boundary of a `str`).
const fn char_at(bytes: &[u8], index: usize) -> char {
    let lead = bytes[index] as u32;
    let (len, mut code) = match lead {
        0x00..=0x7f => (1, lead),
        0xc0..=0xdf => (2, lead & 0x1f),
        0xe0..=0xef => (3, lead & 0x0f),
        _ => (4, lead & 0x07),
    };
    let mut k = 1;
    while k < len && index + k < bytes.len() {
        code = (code << 6) | (bytes[index + k] as u32 & 0x3f);
        k += 1;
    }
    match char::from_u32(code) {
        Some(c) => c,
        None => char::REPLACEMENT_CHARACTER,
    }
}

/// Writes `n` in decimal so that it ends just before `buf[end]`; returns where it starts.
fn write_decimal(buf: &mut [u8], mut end: usize, mut n: u64) -> usize {
    while n >= 100 {
        let pair = usize::try_from(n % 100).unwrap_or(0) * 2;
        n /= 100;
        end -= 2;
        buf[end..end + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    if n >= 10 {
        let pair = usize::try_from(n).unwrap_or(0) * 2;
        end -= 2;
        buf[end..end + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        end -= 1;
        buf[end] = b"0123456789"[usize::try_from(n).unwrap_or(0)];
    }
    end
}

/// Writes two digits per byte into `out`, which holds at least 24 bytes.
fn write_hex(bytes: &[u8; Gdid::SIZE], out: &mut [u8], digits: &[u8; 16]) {
    for (pair, byte) in out.chunks_exact_mut(2).zip(bytes) {
        pair[0] = digits[usize::from(byte >> 4)];
        pair[1] = digits[usize::from(byte & 0x0f)];
    }
}

/// Views bytes this module wrote (ASCII digits, `:`, `x`) as `str`.
///
/// The one `unsafe` in the crate: UTF-8 validation of what the encoders just wrote was half the
/// time of hex formatting (13.2 → 7.7 ns per id measured, docs/performance.md).
#[allow(unsafe_code)]
fn ascii(bytes: &[u8]) -> &str {
    debug_assert!(bytes.is_ascii());
    // SAFETY: every caller passes bytes taken only from DIGIT_PAIRS, LOWER_DIGITS, UPPER_DIGITS,
    // "0123456789", b':' and b"0x", all ASCII, and ASCII is valid UTF-8.
    unsafe { core::str::from_utf8_unchecked(bytes) }
}

impl FromStr for Gdid {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Gdid::try_parse(s)
    }
}

impl fmt::Display for Gdid {
    /// The colon form `era:authority:counter`; honours width, fill and alignment.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(self.encode_text(&mut [0; Gdid::TEXT_MAX_LEN]))
    }
}

impl fmt::Debug for Gdid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Gdid(\"{self}\")")
    }
}

fn fmt_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8; Gdid::SIZE], digits: &[u8; 16]) -> fmt::Result {
    let mut buf = [0u8; 2 + Gdid::HEX_LEN];
    buf[..2].copy_from_slice(b"0x");
    write_hex(bytes, &mut buf[2..], digits);
    let text = ascii(&buf);
    f.pad(if f.alternate() { text } else { &text[2..] })
}

impl fmt::LowerHex for Gdid {
    /// 24 lowercase hex digits of the 12-byte form; `{:#x}` adds `0x`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_hex(f, &self.0, LOWER_DIGITS)
    }
}

impl fmt::UpperHex for Gdid {
    /// 24 uppercase hex digits of the 12-byte form; `{:#X}` adds `0x`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_hex(f, &self.0, UPPER_DIGITS)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdid::tests::fixtures;

    fn id(era: u32, authority: u8, counter: u64) -> Gdid {
        Gdid::from_parts(era, authority, counter).unwrap()
    }

    #[test]
    fn the_hex_table_matches_char_to_digit() {
        for b in 0..=255u8 {
            let expected = (b as char)
                .to_digit(16)
                .map_or(0xff, |d| u8::try_from(d).unwrap());
            assert_eq!(HEX_VALUES[usize::from(b)], expected, "byte {b}");
        }
    }

    #[test]
    fn the_digit_pair_table_counts_from_00_to_99() {
        let expected: String = (0..100).map(|n| format!("{n:02}")).collect();
        assert_eq!(&DIGIT_PAIRS[..], expected.as_bytes());
    }

    #[test]
    fn the_digit_counts_passed_to_parse_segment_are_those_of_the_maxima() {
        assert_eq!(u32::MAX.to_string().len(), 10);
        assert_eq!(AUTHORITY_MAX.to_string().len(), 2);
        assert_eq!(COUNTER_MAX.to_string().len(), 19);
    }

    #[test]
    fn decimal_fields_are_written_exactly() {
        for n in [
            0,
            9,
            10,
            99,
            100,
            101,
            12_345,
            u64::from(u32::MAX),
            COUNTER_MAX,
            u64::MAX,
        ] {
            let mut buf = [0u8; 20];
            let start = write_decimal(&mut buf, 20, n);
            assert_eq!(&buf[start..], n.to_string().as_bytes());
        }
    }

    #[test]
    fn accepts_the_specification_examples() {
        assert_eq!("   231:2:3123   ".parse(), Ok(id(231, 2, 3123)));
        assert_eq!("31 : 2:  3123".parse(), Ok(id(31, 2, 3123)));
        assert_eq!("1293:3:57".parse(), Ok(id(1293, 3, 57)));
        assert_eq!("00000000100000000000004b".parse(), Ok(id(0, 1, 0x4b)));
        assert_eq!("0x00000000100000000000004B".parse(), Ok(id(0, 1, 0x4b)));
        assert_eq!(" 0X00000000100000000000004b\n".parse(), Ok(id(0, 1, 0x4b)));
        assert_eq!("\t0007:0:0010".parse(), Ok(id(7, 0, 10)));
    }

    #[test]
    fn rejects_the_specification_examples_with_a_precise_error() {
        let cases: &[(&str, ParseError)] = &[
            (
                "-1:2:3123",
                ParseError::InvalidDigit {
                    field: Field::Era,
                    character: '-',
                    index: 0,
                },
            ),
            (
                "1:18:3123",
                ParseError::OutOfRange {
                    field: Field::Authority,
                    index: 2,
                    max: 15,
                },
            ),
            (
                ":18:3123",
                ParseError::EmptySegment {
                    field: Field::Era,
                    index: 0,
                },
            ),
            (
                "1::3",
                ParseError::EmptySegment {
                    field: Field::Authority,
                    index: 2,
                },
            ),
            (
                "1: : ",
                ParseError::EmptySegment {
                    field: Field::Authority,
                    index: 2,
                },
            ),
            ("1:2:3:4", ParseError::SegmentCount { found: 4 }),
            ("1:2", ParseError::SegmentCount { found: 2 }),
            ("", ParseError::Empty),
            ("   ", ParseError::Empty),
            ("12345", ParseError::HexLength { found: 5 }),
            ("0x", ParseError::HexLength { found: 0 }),
            (
                "00000000100000000000004g",
                ParseError::InvalidHexDigit {
                    character: 'g',
                    index: 23,
                },
            ),
            (
                "+1:2:3",
                ParseError::InvalidDigit {
                    field: Field::Era,
                    character: '+',
                    index: 0,
                },
            ),
            (
                "1:2:3é",
                ParseError::InvalidDigit {
                    field: Field::Counter,
                    character: 'é',
                    index: 5,
                },
            ),
            (
                "1 2:2:3",
                ParseError::InvalidDigit {
                    field: Field::Era,
                    character: ' ',
                    index: 1,
                },
            ),
        ];
        for (input, expected) in cases {
            assert_eq!(input.parse::<Gdid>(), Err(*expected), "input {input:?}");
        }
    }

    #[test]
    fn rejects_each_field_one_past_its_maximum() {
        assert_eq!("4294967295:15:1152921504606846975".parse(), Ok(Gdid::MAX));
        assert_eq!(
            "4294967296:0:0".parse::<Gdid>(),
            Err(ParseError::OutOfRange {
                field: Field::Era,
                index: 0,
                max: u32::MAX.into()
            })
        );
        assert_eq!(
            "0:16:0".parse::<Gdid>(),
            Err(ParseError::OutOfRange {
                field: Field::Authority,
                index: 2,
                max: 15
            })
        );
        assert_eq!(
            "0:0:1152921504606846976".parse::<Gdid>(),
            Err(ParseError::OutOfRange {
                field: Field::Counter,
                index: 4,
                max: COUNTER_MAX
            })
        );
        assert_eq!(
            "0:0:99999999999999999999999".parse::<Gdid>(),
            Err(ParseError::OutOfRange {
                field: Field::Counter,
                index: 4,
                max: COUNTER_MAX
            })
        );
    }

    #[test]
    fn error_messages_say_what_and_where() {
        let msg = |s: &str| s.parse::<Gdid>().unwrap_err().to_string();
        assert_eq!(
            msg("1:x:3"),
            "invalid character 'x' at byte 2 in the authority segment: expected a decimal digit"
        );
        assert_eq!(
            msg("1:2:3:4"),
            "expected 3 colon-separated segments (era:authority:counter), found 4"
        );
        assert_eq!(
            msg("0123"),
            "expected 24 hex digits (optionally after 0x), found 4"
        );
        assert_eq!(
            msg("zz0000001000000000000004"),
            "invalid character 'z' at byte 0: expected a hex digit"
        );
        assert_eq!(
            msg("1::3"),
            "the authority segment at byte 2 is empty: expected decimal digits"
        );
    }

    #[test]
    fn formats_the_specification_examples() {
        let g = id(0, 1, 0x4b);
        assert_eq!(format!("{g:x}"), "00000000100000000000004b");
        assert_eq!(format!("{g:X}"), "00000000100000000000004B");
        assert_eq!(format!("{g:#x}"), "0x00000000100000000000004b");
        assert_eq!(format!("{g:#X}"), "0x00000000100000000000004B");
        assert_eq!(g.to_string(), "0:1:75");
        assert_eq!(format!("{g:>8}|"), "  0:1:75|");
        assert_eq!(format!("{g:?}"), "Gdid(\"0:1:75\")");
    }

    #[test]
    fn every_text_form_round_trips_at_the_boundaries() {
        for g in fixtures() {
            for text in [
                g.to_string(),
                format!("{g:x}"),
                format!("{g:X}"),
                format!("{g:#x}"),
                format!(" {g:#X} "),
            ] {
                assert_eq!(text.parse::<Gdid>(), Ok(g), "text {text:?}");
            }
        }
    }

    #[test]
    fn the_macro_parses_at_compile_time() {
        const ID: Gdid = crate::gdid!("5:1:9");
        assert_eq!(ID, id(5, 1, 9));
    }
}
