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
    #[inline]
    pub const fn try_parse(input: &str) -> Result<Gdid, ParseError> {
        let bytes = input.as_bytes();
        // The canonical hex shapes first, in one pass; anything else goes to `parse_text`.
        if let Some(id) = parse_hex_exact(strip_hex_prefix(bytes)) {
            return Ok(id);
        }
        parse_text(bytes)
    }

    /// Writes the colon form into `buf` and returns it as a `&str`; never allocates.
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// let mut buf = [0u8; Gdid::TEXT_MAX_LEN];
    /// assert_eq!(Gdid::MAX.encode_text(&mut buf), "4294967295:15:1152921504606846975");
    /// ```
    #[inline]
    pub fn encode_text<'b>(&self, buf: &'b mut [u8; Gdid::TEXT_MAX_LEN]) -> &'b str {
        // Right to left, straight into `buf`: no scratch buffers to copy from.
        let mut start = write_decimal(buf, Gdid::TEXT_MAX_LEN, self.counter());
        start -= 1;
        buf[start] = b':';
        let authority = usize::from(self.authority());
        if authority >= 10 {
            start -= 2;
            buf[start..start + 2].copy_from_slice(&DIGIT_PAIRS[2 * authority..2 * authority + 2]);
        } else {
            start -= 1;
            buf[start] = DIGIT_PAIRS[2 * authority + 1];
        }
        start -= 1;
        buf[start] = b':';
        start = write_decimal_u32(buf, start, self.era());
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
    #[inline]
    pub fn encode_hex_lower<'b>(&self, buf: &'b mut [u8; Gdid::HEX_LEN]) -> &'b str {
        write_hex(&self.0, buf, LOWER);
        ascii(buf)
    }

    /// Writes the 24 uppercase hex digits of the 12-byte form into `buf`; never allocates.
    #[inline]
    pub fn encode_hex_upper<'b>(&self, buf: &'b mut [u8; Gdid::HEX_LEN]) -> &'b str {
        write_hex(&self.0, buf, UPPER);
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

/// [`Gdid::try_parse`] after the hex fast path: the canonical colon form in one pass, anything else
/// (whitespace, leading zeros past the field's width, an error) by the general parser, which
/// decides alone.
///
/// Not inlined: the colon parsers need many registers, and with them inlined the hex path saved
/// and restored six of them on every call.
#[inline(never)]
const fn parse_text(bytes: &[u8]) -> Result<Gdid, ParseError> {
    if let Some(id) = parse_colon_exact(bytes) {
        return Ok(id);
    }
    parse_general(bytes)
}

/// The general parser: every form [`Gdid::try_parse`] accepts and every error it reports.
#[inline(never)]
const fn parse_general(bytes: &[u8]) -> Result<Gdid, ParseError> {
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

/// The colon form without whitespace and with at most 10, 2 and 19 digits: `None` for anything
/// else, which the general parser then reads (or refuses) exactly as before.
///
/// One pass, left to right, no error built: what the general parser spends in its colon count,
/// trims, digit checks and leading-zero skips is gone.
#[inline(always)]
const fn parse_colon_exact(bytes: &[u8]) -> Option<Gdid> {
    let n = bytes.len();
    let (era, i) = leading_digits(bytes, 0, 10);
    if i == 0 || i >= n || bytes[i] != b':' || era > u32::MAX as u64 {
        return None;
    }
    let (authority, j) = leading_digits(bytes, i + 1, 2);
    if j == i + 1 || j >= n || bytes[j] != b':' || authority > AUTHORITY_MAX as u64 {
        return None;
    }
    let (counter, k) = leading_digits(bytes, j + 1, 19);
    if k == j + 1 || k != n || counter > COUNTER_MAX {
        return None;
    }
    // Checked above: era ≤ u32::MAX.
    #[allow(clippy::cast_possible_truncation)]
    let id = Gdid::from_raw(era as u32, (authority << Gdid::COUNTER_BITS) | counter);
    Some(id)
}

/// Reads the decimal digits at `bytes[start..]`, at most `max_digits` of them (≤ 19, so the value
/// fits); returns their value and the index after the last.
///
/// Eight digits at a time while eight remain and all are digits, then one at a time.
#[inline(always)]
const fn leading_digits(bytes: &[u8], start: usize, max_digits: usize) -> (u64, usize) {
    let end = if bytes.len() - start < max_digits {
        bytes.len()
    } else {
        start + max_digits
    };
    let mut value = 0u64;
    let mut i = start;
    while i + 8 <= end {
        let word = load_word(bytes, i);
        if !eight_digits(word) {
            break;
        }
        value = value * 100_000_000 + eight_digits_value(word);
        i += 8;
    }
    while i < end {
        let digit = bytes[i].wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value * 10 + digit as u64;
        i += 1;
    }
    (value, i)
}

/// The eight bytes at `bytes[at..at + 8]` as a little-endian word (the first byte lowest).
#[inline(always)]
const fn load_word(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes([
        bytes[at],
        bytes[at + 1],
        bytes[at + 2],
        bytes[at + 3],
        bytes[at + 4],
        bytes[at + 5],
        bytes[at + 6],
        bytes[at + 7],
    ])
}

/// Whether each byte of `word` is an ASCII digit.
#[inline(always)]
const fn eight_digits(word: u64) -> bool {
    let high = word & 0xf0f0_f0f0_f0f0_f0f0;
    let carried = word.wrapping_add(0x0606_0606_0606_0606) & 0xf0f0_f0f0_f0f0_f0f0;
    (high | (carried >> 4)) == 0x3333_3333_3333_3333
}

/// The value of eight ASCII digits (the first byte most significant): three multiplications
/// instead of eight dependent multiply-adds.
#[inline(always)]
const fn eight_digits_value(word: u64) -> u64 {
    let w = word - 0x3030_3030_3030_3030;
    let w = w.wrapping_mul(10) + (w >> 8);
    let high = (w & 0x0000_00ff_0000_00ff).wrapping_mul(100 + (1_000_000 << 32));
    let low = ((w >> 16) & 0x0000_00ff_0000_00ff).wrapping_mul(1 + (10_000 << 32));
    high.wrapping_add(low) >> 32
}

/// Exactly 24 hex digits: `None` for anything else (a bad digit included), which the general
/// parser then reads or refuses.
///
/// Branch-free per digit (one flag for the whole input), so the loop vectorizes. The digits are
/// read as two overlapping halves of 16, `0..16` and `8..24`: two full 16-byte vectors, where
/// the 24 digits read in one loop made three half-empty ones (91 instructions per call instead of
/// 119, callgrind).
#[inline(always)]
const fn parse_hex_exact(bytes: &[u8]) -> Option<Gdid> {
    let digits = match bytes.first_chunk::<HEX_DIGITS>() {
        Some(digits) if bytes.len() == HEX_DIGITS => digits,
        _ => return None,
    };
    let (Some(head), Some(tail)) = (digits.first_chunk::<16>(), digits.last_chunk::<16>()) else {
        return None;
    };
    let mut head_nibbles = [0u8; 16];
    let mut tail_nibbles = [0u8; 16];
    let mut invalid = 0u8;
    let mut k = 0;
    while k < 16 {
        let (nibble, bad) = hex_nibble(head[k]);
        head_nibbles[k] = nibble;
        invalid |= bad;
        let (nibble, bad) = hex_nibble(tail[k]);
        tail_nibbles[k] = nibble;
        invalid |= bad;
        k += 1;
    }
    if invalid != 0 {
        return None;
    }
    // Bytes 0..8 from the head, 8..12 from the second half of the tail (digits 16..24).
    let mut out = [0u8; Gdid::SIZE];
    let mut k = 0;
    while k < 8 {
        out[k] = (head_nibbles[2 * k] << 4) | head_nibbles[2 * k + 1];
        k += 1;
    }
    while k < Gdid::SIZE {
        out[k] = (tail_nibbles[2 * k - 8] << 4) | tail_nibbles[2 * k - 7];
        k += 1;
    }
    Some(Gdid::from_bytes(out))
}

/// The value of the hex digit `c` and 0, or 1 (and any value) when `c` is not a hex digit;
/// without a branch.
#[inline(always)]
const fn hex_nibble(c: u8) -> (u8, u8) {
    let digit = c.wrapping_sub(b'0');
    let letter = (c | 0x20).wrapping_sub(b'a');
    let is_digit = digit < 10;
    let is_letter = letter < 6;
    let value = if is_digit {
        digit
    } else {
        letter.wrapping_add(10)
    };
    (value, !(is_digit | is_letter) as u8)
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
    let (_, digits) = bytes.split_at(start);
    if let Some(id) = parse_hex_exact(digits.split_at(HEX_DIGITS).0) {
        return Ok(id);
    }
    Err(invalid_hex(bytes, start))
}

/// The error for the first byte at `bytes[start..]` that is not a hex digit (there is one).
const fn invalid_hex(bytes: &[u8], start: usize) -> ParseError {
    let mut index = start;
    while index < bytes.len() && HEX_VALUES[bytes[index] as usize] != 0xff {
        index += 1;
    }
    ParseError::InvalidHexDigit {
        character: char_at(bytes, index),
        index,
    }
}

/// The 24 digits of `0x` or `0X` and 24 digits; `bytes` otherwise.
#[inline(always)]
const fn strip_hex_prefix(bytes: &[u8]) -> &[u8] {
    match bytes {
        [b'0', b'x' | b'X', digits @ ..] if digits.len() == HEX_DIGITS => digits,
        _ => bytes,
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
///
/// Eight digits at a time first, each block as two independent halves of two pairs: the longest
/// counter costs two 64-bit divisions by `10^8` instead of nine chained ones by 100.
#[inline(always)]
fn write_decimal(buf: &mut [u8], mut end: usize, mut n: u64) -> usize {
    while n >= 100_000_000 {
        // Truncation impossible: the remainder is below 10^8.
        #[allow(clippy::cast_possible_truncation)]
        let block = (n % 100_000_000) as u32;
        n /= 100_000_000;
        end -= 8;
        write_eight_digits(buf, end, block);
    }
    // Truncation impossible: the loop left n below 10^8.
    #[allow(clippy::cast_possible_truncation)]
    let n = n as u32;
    write_decimal_u32(buf, end, n)
}

/// [`write_decimal`] for a `u32`: two digits per step.
#[inline(always)]
fn write_decimal_u32(buf: &mut [u8], mut end: usize, mut n: u32) -> usize {
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        end -= 2;
        buf[end..end + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
    let pair = n as usize * 2;
    if n >= 10 {
        end -= 2;
        buf[end..end + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    } else {
        end -= 1;
        buf[end] = DIGIT_PAIRS[pair + 1];
    }
    end
}

/// Writes the eight digits of `block` (< 10^8, zero-padded) at `buf[at..at + 8]`.
#[inline(always)]
fn write_eight_digits(buf: &mut [u8], at: usize, block: u32) {
    let (high, low) = (block / 10_000, block % 10_000);
    let pairs = [high / 100, high % 100, low / 100, low % 100];
    let out = &mut buf[at..at + 8];
    for (k, pair) in pairs.into_iter().enumerate() {
        let pair = pair as usize * 2;
        out[2 * k..2 * k + 2].copy_from_slice(&DIGIT_PAIRS[pair..pair + 2]);
    }
}

/// Writes two digits per byte into `out`, which holds at least 24 bytes; `letters` is
/// [`LOWER`] or [`UPPER`].
///
/// Four bytes per step: their nibbles spread one per byte, then `'0'` added, and `letters` more
/// where a nibble is 10 or above; no table lookups.
#[inline(always)]
fn write_hex(bytes: &[u8; Gdid::SIZE], out: &mut [u8], letters: u64) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    for (chunk, four) in out.chunks_exact_mut(8).zip(bytes.chunks_exact(4)) {
        let mut v = 0u64;
        for (k, byte) in four.iter().enumerate() {
            v |= u64::from(*byte) << (16 * k);
        }
        // Each 16-bit lane: the high nibble in the low byte (written first), the low one above.
        let nibbles = ((v >> 4) & 0x000f_000f_000f_000f) | ((v & 0x000f_000f_000f_000f) << 8);
        let is_letter = ((nibbles + ONES * 6) >> 4) & ONES;
        let chars = nibbles + ONES * u64::from(b'0') + is_letter * letters;
        chunk.copy_from_slice(&chars.to_le_bytes());
    }
}

/// What [`write_hex`] adds to `'0' + nibble` for the nibbles 10-15: `'a' - '0' - 10`.
const LOWER: u64 = (b'a' - b'0' - 10) as u64;
/// As [`LOWER`], for `'A'`.
const UPPER: u64 = (b'A' - b'0' - 10) as u64;

/// Views bytes this module wrote (ASCII digits, `:`, `x`) as `str`.
///
/// The one `unsafe` in the crate: UTF-8 validation of what the encoders just wrote was half the
/// time of hex formatting (13.2 → 7.7 ns per id, measured when the codecs were tuned).
#[allow(unsafe_code)]
fn ascii(bytes: &[u8]) -> &str {
    debug_assert!(bytes.is_ascii());
    // SAFETY: every caller passes bytes taken only from DIGIT_PAIRS, b':', b"0x" and `write_hex`
    // ('0' plus a nibble, plus 39 or 7 for 10-15: '0'-'9', 'a'-'f', 'A'-'F'), all ASCII, and
    // ASCII is valid UTF-8.
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

fn fmt_hex(f: &mut fmt::Formatter<'_>, bytes: &[u8; Gdid::SIZE], letters: u64) -> fmt::Result {
    let mut buf = [0u8; 2 + Gdid::HEX_LEN];
    buf[..2].copy_from_slice(b"0x");
    write_hex(bytes, &mut buf[2..], letters);
    let text = ascii(&buf);
    f.pad(if f.alternate() { text } else { &text[2..] })
}

impl fmt::LowerHex for Gdid {
    /// 24 lowercase hex digits of the 12-byte form; `{:#x}` adds `0x`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_hex(f, &self.0, LOWER)
    }
}

impl fmt::UpperHex for Gdid {
    /// 24 uppercase hex digits of the 12-byte form; `{:#X}` adds `0x`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt_hex(f, &self.0, UPPER)
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
        // Every digit count, at its edges.
        let mut power = 1u64;
        while let Some(next) = power.checked_mul(10) {
            for n in [power - 1, power, power + 1, next - 1] {
                let mut buf = [0u8; 20];
                let start = write_decimal(&mut buf, 20, n);
                assert_eq!(&buf[start..], n.to_string().as_bytes(), "{n}");
            }
            power = next;
        }
    }

    /// Every digit count in every field, each field at each of its positions.
    #[test]
    fn encode_text_matches_format_for_every_field_width() {
        let widths = |max: u64| {
            let mut values = vec![0, max];
            let mut power = 1u64;
            while power <= max / 10 {
                values.extend([power, power * 10 - 1, power * 3 + 7]);
                power *= 10;
            }
            values
        };
        let mut buf = [0u8; Gdid::TEXT_MAX_LEN];
        for era in widths(u32::MAX.into()) {
            for authority in [0, 9, 10, 15] {
                for counter in widths(COUNTER_MAX) {
                    let g = id(u32::try_from(era).unwrap(), authority, counter);
                    let expected = format!("{era}:{authority}:{counter}");
                    assert_eq!(g.encode_text(&mut buf), expected);
                }
            }
        }
    }

    #[test]
    fn hex_nibble_matches_the_table() {
        for c in 0..=255u8 {
            let (value, bad) = hex_nibble(c);
            match HEX_VALUES[usize::from(c)] {
                0xff => assert_eq!(bad, 1, "byte {c}"),
                expected => assert_eq!((value, bad), (expected, 0), "byte {c}"),
            }
        }
    }

    /// A bad byte at each of the 24 places (in either half read by `parse_hex_exact`, and where
    /// they overlap) is refused by the fast path and reported at its index by the general one,
    /// with and without `0x`.
    #[test]
    fn a_bad_hex_digit_anywhere_is_found() {
        let good = "0123456789abcdefABCDEF09";
        for at in 0..HEX_DIGITS {
            for bad in ['/', ':', '@', 'G', '`', 'g', '\0', '\u{7f}', 'é'] {
                let mut text = String::from(&good[..at]);
                text.push(bad);
                text.push_str(&good[at + 1..]);
                assert_eq!(parse_hex_exact(text.as_bytes()), None, "{text:?}");
                // (One `:` makes it a colon form with the wrong number of segments.)
                if bad.is_ascii() && bad != ':' {
                    for (prefix, offset) in [("", 0), ("0x", 2)] {
                        assert_eq!(
                            Gdid::try_parse(&format!("{prefix}{text}")),
                            Err(ParseError::InvalidHexDigit {
                                character: bad,
                                index: at + offset,
                            }),
                            "{prefix}{text:?}"
                        );
                    }
                }
            }
        }
        assert_eq!(
            Gdid::try_parse(good).map(|g| format!("{g:x}")),
            Ok(good.to_ascii_lowercase())
        );
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

    /// The one-pass parsers decide nothing: whatever they accept, the general parser accepts
    /// with the same id, and whatever they pass on it decides alone.
    #[test]
    fn the_fast_paths_agree_with_the_general_parser() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        };
        let alphabets: [&[u8]; 4] = [
            b"0123456789:",
            b"0000000000119:::",
            b"0123456789abcdefABCDEFxX: \t",
            b"09afAFgG:/@`",
        ];
        let mut inputs: Vec<String> = Vec::new();
        for g in fixtures() {
            inputs.extend([g.to_string(), format!("{g:x}"), format!("{g:#X}")]);
            inputs.push(format!("0{g}"));
            inputs.push(format!("{}:{}:0{}", g.era(), g.authority(), g.counter()));
            inputs.push(format!("{}:0{}:{}", g.era(), g.authority(), g.counter()));
        }
        for era in [
            "4294967295",
            "4294967296",
            "9999999999",
            "04294967295",
            "0",
            "00",
        ] {
            for authority in ["15", "16", "99", "015", "1", "01", "0"] {
                for counter in [
                    "1152921504606846975",
                    "1152921504606846976",
                    "9999999999999999999",
                    "01152921504606846975",
                    "0000000000000000000",
                    "18446744073709551616",
                    "7",
                ] {
                    inputs.push(format!("{era}:{authority}:{counter}"));
                }
            }
        }
        for _ in 0..200_000 {
            let r = next();
            let alphabet = alphabets[usize::try_from(r % 4).unwrap()];
            let len = usize::try_from((r >> 8) % 36).unwrap();
            let text: String = (0..len)
                .map(|_| {
                    let pick = usize::try_from(next() % alphabet.len() as u64).unwrap();
                    char::from(alphabet[pick])
                })
                .collect();
            inputs.push(text);
        }
        for input in &inputs {
            let bytes = input.as_bytes();
            let general = parse_general(bytes);
            assert_eq!(Gdid::try_parse(input), general, "input {input:?}");
            if let Some(id) = parse_colon_exact(bytes) {
                assert_eq!(general, Ok(id), "input {input:?}");
            }
            if let Some(id) = parse_hex_exact(bytes) {
                assert_eq!(general, Ok(id), "input {input:?}");
            }
        }
    }

    #[test]
    fn the_macro_parses_at_compile_time() {
        const ID: Gdid = crate::gdid!("5:1:9");
        assert_eq!(ID, id(5, 1, 9));
    }
}
