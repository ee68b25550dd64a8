//! The variable-length forms, both unsigned LEB128 of the era followed by unsigned LEB128 of a
//! 64-bit value:
//!
//! | form | second value | `Gdid(5,0,123)` | `Gdid(5,3,123)` |
//! |---|---|---|---|
//! | `leb` (NFX/Azos "Slim") | `id64 = authority << 60 \| counter` | `05 7b` (2 bytes) | 10 bytes |
//! | `compact` | `counter << 4 \| authority` | `05 b0 0f` (3 bytes) | `05 b3 0f` (3 bytes) |
//!
//! `leb` is the wire form of NFX/Azos and compresses authority-0 ids only; `compact` keeps small
//! counters small whatever the authority (at most 6 bytes for era < 128 and counter < 2^31).
//!
//! Decoders accept only canonical (shortest) encodings and report how many bytes they read, so
//! several ids can be read back to back from one buffer.

use bytes::BufMut;

use crate::error::{BufferTooSmall, DecodeError, Field};
use crate::gdid::Gdid;

/// Bytes of the longest unsigned LEB128 of a `u32`.
const ERA_MAX_LEN: usize = 5;
/// Bytes of the longest unsigned LEB128 of a `u64`.
const U64_MAX_LEN: usize = 10;

/// The two variable-length forms differ only in how the low 64 bits are packed.
#[derive(Clone, Copy)]
enum Form {
    Leb,
    Compact,
}

impl Form {
    const fn packed(self, id: &Gdid) -> u64 {
        match self {
            Form::Leb => id.id64(),
            // `id64` is `authority << 60 | counter`: rotated by 4 it is `counter << 4 | authority`
            // in one instruction.
            Form::Compact => id.id64().rotate_left(4),
        }
    }

    const fn unpack(self, era: u32, packed: u64) -> Gdid {
        match self {
            Form::Leb => Gdid::from_raw(era, packed),
            // The inverse of `packed`: `counter << 4 | authority` rotated back is
            // `authority << 60 | counter`. Every u64 is a valid packing.
            Form::Compact => Gdid::from_raw(era, packed.rotate_right(4)),
        }
    }

    const fn field(self) -> Field {
        match self {
            Form::Leb => Field::Id64,
            Form::Compact => Field::CounterAndAuthority,
        }
    }

    const fn len(self, id: &Gdid) -> usize {
        uleb_len(id.era() as u64) + uleb_len(self.packed(id))
    }

    #[inline(always)]
    fn write(self, id: &Gdid, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let era = u64::from(id.era());
        let packed = self.packed(id);
        let era_len = uleb_len(era);
        let needed = era_len + uleb_len(packed);
        let Some(out) = out.get_mut(..needed) else {
            return Err(BufferTooSmall {
                needed,
                available: out.len(),
            });
        };
        let (head, tail) = out.split_at_mut(era_len);
        put_uleb_exact(head, era);
        put_uleb_exact(tail, packed);
        Ok(needed)
    }

    #[inline(always)]
    fn encode(self, id: &Gdid, buf: &mut impl BufMut) {
        let mut scratch = [0u8; Gdid::VARINT_MAX_LEN];
        // VARINT_MAX_LEN holds every encoding: the error cannot happen.
        let len = self.write(id, &mut scratch).unwrap_or_default();
        buf.put_slice(&scratch[..len]);
    }

    #[inline(always)]
    fn decode(self, input: &[u8]) -> Result<(Gdid, usize), DecodeError> {
        // The common shapes in registers; anything else (an error included) out of line.
        match read_uleb_fast(input, 0, u64::from(u32::MAX)) {
            Some((era, era_len)) => match read_uleb_fast(input, era_len, u64::MAX) {
                Some((packed, packed_len)) => Ok(self.assemble(era, era_len, packed, packed_len)),
                None => self.decode_general(input),
            },
            None => self.decode_general(input),
        }
    }

    /// [`Form::decode`] for every input: every shape [`read_uleb_fast`] passes on, and every
    /// error.
    ///
    /// Apart and not inlined: the errors are built only here, so the fast path returns its
    /// values in registers, where two calls of [`read_uleb`] handed back each value through
    /// memory as a `Result` (88 → 35 instructions per `decode_leb` of 2 bytes, callgrind).
    #[inline(never)]
    fn decode_general(self, input: &[u8]) -> Result<(Gdid, usize), DecodeError> {
        let (era, era_len) = read_uleb(input, 0, Field::Era, u64::from(u32::MAX))?;
        let (packed, packed_len) = read_uleb(input, era_len, self.field(), u64::MAX)?;
        Ok(self.assemble(era, era_len, packed, packed_len))
    }

    /// The id and the bytes read from the era (at most `u32::MAX`, checked by the reader) and
    /// the packed value with their lengths.
    #[inline(always)]
    const fn assemble(
        self,
        era: u64,
        era_len: usize,
        packed: u64,
        packed_len: usize,
    ) -> (Gdid, usize) {
        // The reader bounded the era by u32::MAX.
        #[allow(clippy::cast_possible_truncation)]
        let era = era as u32;
        (self.unpack(era, packed), era_len + packed_len)
    }
}

impl Gdid {
    /// Bytes of the longest `leb` or `compact` encoding (5 for the era, 10 for the rest).
    pub const VARINT_MAX_LEN: usize = ERA_MAX_LEN + U64_MAX_LEN;

    /// Length of the `leb` form of this id, 2 to 15 bytes.
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// assert_eq!(Gdid::from_parts(5, 0, 123).unwrap().leb_len(), 2);
    /// assert_eq!(Gdid::from_parts(5, 1, 123).unwrap().leb_len(), 10);
    /// ```
    pub const fn leb_len(&self) -> usize {
        Form::Leb.len(self)
    }

    /// Length of the `compact` form of this id, 2 to 15 bytes.
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// assert_eq!(Gdid::from_parts(5, 1, 123).unwrap().compact_len(), 3);
    /// assert_eq!(Gdid::from_parts(127, 15, (1 << 31) - 1).unwrap().compact_len(), 6);
    /// ```
    pub const fn compact_len(&self) -> usize {
        Form::Compact.len(self)
    }

    /// Appends the `leb` form (LEB128 era, LEB128 id64) to `buf`.
    ///
    /// # Panics
    ///
    /// As [`BufMut::put_slice`]: when `buf` cannot hold [`leb_len`](Self::leb_len) more bytes
    /// (a `Vec<u8>` or `BytesMut` grows; a `&mut [u8]` does not).
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// let mut out = Vec::new();
    /// Gdid::from_parts(0, 0, 128).unwrap().encode_leb(&mut out);
    /// assert_eq!(out, [0x00, 0x80, 0x01]);
    /// ```
    #[inline]
    pub fn encode_leb(&self, buf: &mut impl BufMut) {
        Form::Leb.encode(self, buf);
    }

    /// Appends the `compact` form (LEB128 era, LEB128 of `counter << 4 | authority`) to `buf`.
    ///
    /// # Panics
    ///
    /// As [`BufMut::put_slice`]: when `buf` cannot hold [`compact_len`](Self::compact_len) more
    /// bytes.
    #[inline]
    pub fn encode_compact(&self, buf: &mut impl BufMut) {
        Form::Compact.encode(self, buf);
    }

    /// Writes the `leb` form at the start of `out` and returns its length.
    ///
    /// # Errors
    ///
    /// [`BufferTooSmall`] when `out` is shorter than [`leb_len`](Self::leb_len); nothing is
    /// written then.
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// let mut out = [0u8; Gdid::VARINT_MAX_LEN];
    /// let len = Gdid::from_parts(5, 0, 123).unwrap().write_leb(&mut out).unwrap();
    /// assert_eq!(&out[..len], [0x05, 0x7b]);
    /// ```
    #[inline]
    pub fn write_leb(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        Form::Leb.write(self, out)
    }

    /// Writes the `compact` form at the start of `out` and returns its length.
    ///
    /// # Errors
    ///
    /// [`BufferTooSmall`] when `out` is shorter than [`compact_len`](Self::compact_len); nothing
    /// is written then.
    #[inline]
    pub fn write_compact(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        Form::Compact.write(self, out)
    }

    /// Reads a `leb` form from the start of `input`; returns the id and the bytes consumed.
    ///
    /// # Errors
    ///
    /// [`DecodeError`] for truncated input, a non-canonical (overlong) group, an era above
    /// `u32::MAX` or an id64 above `u64::MAX`.
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// let (id, used) = Gdid::decode_leb(&[0x05, 0x7b, 0xff]).unwrap();
    /// assert_eq!((id, used), (Gdid::from_parts(5, 0, 123).unwrap(), 2));
    /// assert!(Gdid::decode_leb(&[0x05, 0xfb, 0x00]).is_err()); // overlong
    /// ```
    #[inline]
    pub fn decode_leb(input: &[u8]) -> Result<(Gdid, usize), DecodeError> {
        Form::Leb.decode(input)
    }

    /// Reads a `compact` form from the start of `input`; returns the id and the bytes consumed.
    ///
    /// # Errors
    ///
    /// As [`decode_leb`](Self::decode_leb).
    #[inline]
    pub fn decode_compact(input: &[u8]) -> Result<(Gdid, usize), DecodeError> {
        Form::Compact.decode(input)
    }
}

/// Length of the unsigned LEB128 of `value`: one byte per started group of 7 bits.
#[inline(always)]
const fn uleb_len(value: u64) -> usize {
    ULEB_LEN_BY_HIGHEST_BIT[(value | 1).ilog2() as usize] as usize
}

/// [`uleb_len`] by the index of the highest set bit (0 to 63): one load instead of a division.
/// Indexed by `ilog2` (x86 `bsr`) rather than by leading zeros, which is `63 - bsr`: one
/// instruction less.
const ULEB_LEN_BY_HIGHEST_BIT: [u8; 64] = {
    let mut table = [0u8; 64];
    let mut bit: usize = 0;
    while bit < 64 {
        // At most 10: the narrowing is exact.
        #[allow(clippy::cast_possible_truncation)]
        let len = (bit + 1).div_ceil(7) as u8;
        table[bit] = len;
        bit += 1;
    }
    table
};

/// The continuation bits of the first eight bytes of an unsigned LEB128 of `len` bytes (all of
/// them but the last), by `len`: one load where the mask took five instructions to build.
const CONTINUED: [u64; 16] = {
    let mut table = [0u64; 16];
    let mut len = 1;
    while len < 16 {
        let continued = if len > 8 { 8 } else { len - 1 };
        let mut byte = 0;
        while byte < continued {
            table[len] |= 0x80 << (8 * byte);
            byte += 1;
        }
        len += 1;
    }
    table
};

/// The 7-bit groups of the low 56 bits of `value`, one per byte, least significant first
/// (little-endian), continuation bits clear: three shift-and-mask steps instead of a loop.
#[inline(always)]
const fn spread_groups(value: u64) -> u64 {
    let v = (value & 0x0000_0000_0fff_ffff) | ((value & 0x00ff_ffff_f000_0000) << 4);
    let v = (v & 0x0000_3fff_0000_3fff) | ((v & 0x0fff_c000_0fff_c000) << 2);
    (v & 0x007f_007f_007f_007f) | ((v & 0x3f80_3f80_3f80_3f80) << 1)
}

/// The inverse of [`spread_groups`]: the value of eight 7-bit groups (continuation bits ignored).
#[inline(always)]
const fn gather_groups(bytes: u64) -> u64 {
    let v = bytes & 0x7f7f_7f7f_7f7f_7f7f;
    let v = (v & 0x007f_007f_007f_007f) | ((v & 0x7f00_7f00_7f00_7f00) >> 1);
    let v = (v & 0x0000_3fff_0000_3fff) | ((v & 0x3fff_0000_3fff_0000) >> 2);
    (v & 0x0000_0000_0fff_ffff) | ((v & 0x0fff_ffff_0000_0000) >> 4)
}

/// Writes the unsigned LEB128 of `value` into `out`, which is exactly `uleb_len(value)` long.
///
/// The bytes are made at once ([`spread_groups`] and a mask of continuation bits) and stored
/// with at most two overlapping fixed-size stores, as `memcpy` does for short lengths: no loop
/// and no byte-per-iteration dependency on `value >>= 7`.
#[inline(always)]
fn put_uleb_exact(out: &mut [u8], value: u64) {
    let len = out.len();
    // Truncations intended: each byte takes the low 7 bits of a shifted value.
    #[allow(clippy::cast_possible_truncation)]
    match out {
        // Tested on the value first (the slice is never empty): the commonest length (most eras,
        // small ids) then costs one compare, where a switch on the length tested it last.
        [only, ..] if value < 0x80 => {
            *only = value as u8;
            return;
        }
        [first, second] => {
            *first = value as u8 | 0x80;
            *second = (value >> 7) as u8;
            return;
        }
        [first, second, third] => {
            *first = value as u8 | 0x80;
            *second = (value >> 7) as u8 | 0x80;
            *third = (value >> 14) as u8;
            return;
        }
        _ => {}
    }
    let word = spread_groups(value) | CONTINUED[len % CONTINUED.len()];
    // Truncations intended below: each store takes the low bytes of a shifted word.
    #[allow(clippy::cast_possible_truncation)]
    match len {
        ..=8 => {
            if let Some(head) = out.first_chunk_mut::<4>() {
                *head = (word as u32).to_le_bytes();
            }
            if let Some(tail) = out.last_chunk_mut::<4>() {
                *tail = ((word >> (8 * (len - 4))) as u32).to_le_bytes();
            }
        }
        _ => {
            // 9 or 10 bytes: the value is at least 2^56; its top 8 bits make the last 1 or 2.
            if let Some(head) = out.first_chunk_mut::<8>() {
                *head = word.to_le_bytes();
            }
            let top = value >> 56;
            if len == 9 {
                out[8] = top as u8;
            } else {
                out[8] = top as u8 | 0x80;
                out[9] = (top >> 7) as u8;
            }
        }
    }
}

/// Writes `value` at the start of `out`, which the caller has checked is long enough.
///
/// The reference for [`put_uleb_exact`] in the tests. Hand-written rather than the `leb128`
/// crate's `write::unsigned`: that one writes each byte through `io::Write` (a `memcpy` call per
/// byte) and measured 2.2-4.3× slower here (docs/benchmarks/results.md, "Benchmarks").
#[cfg(test)]
fn put_uleb(out: &mut [u8], mut value: u64) -> usize {
    let mut len = 0;
    while value >= 0x80 {
        // Truncation intended: the low 7 bits, with the continuation bit.
        #[allow(clippy::cast_possible_truncation)]
        let group = (value as u8) | 0x80;
        out[len] = group;
        value >>= 7;
        len += 1;
    }
    #[allow(clippy::cast_possible_truncation)]
    let last = value as u8;
    out[len] = last;
    len + 1
}

/// Reads one canonical unsigned LEB128 no greater than `max` at `input[start..]`.
///
/// Canonical means shortest: the last byte of a multi-byte encoding is never `0x00` (that is the
/// only way an encoding can be longer than its value needs), and there are at most 10 bytes with
/// at most one bit in the tenth.
#[inline]
fn read_uleb(
    input: &[u8],
    start: usize,
    field: Field,
    max: u64,
) -> Result<(u64, usize), DecodeError> {
    match read_uleb_fast(input, start, max) {
        Some(found) => Ok(found),
        None => read_uleb_groups(input, start, field, max),
    }
}

/// [`read_uleb`] for the common shapes: one byte, a whole encoding within eight bytes or
/// nine and ten bytes ([`read_uleb_word`]), two bytes when fewer than eight remain. `None` for
/// anything else (an error included), which [`read_uleb_groups`] then reads or refuses.
#[inline(always)]
fn read_uleb_fast(input: &[u8], start: usize, max: u64) -> Option<(u64, usize)> {
    let rest = input.get(start..)?;
    // Most eras and many ids fit in one byte.
    if let Some(&byte) = rest.first() {
        if byte < 0x80 && u64::from(byte) <= max {
            return Some((u64::from(byte), 1));
        }
    }
    if let Some(word) = rest.first_chunk::<8>() {
        return read_uleb_word(rest, u64::from_le_bytes(*word), max);
    }
    if let Some(&[first, second]) = rest.first_chunk::<2>() {
        // Two bytes (values below 2^14) when fewer than eight remain.
        if first >= 0x80 && second < 0x80 && second != 0 {
            let value = u64::from(first & 0x7f) | (u64::from(second) << 7);
            if value <= max {
                return Some((value, 2));
            }
        }
    }
    None
}

/// The canonical encodings of two bytes or more at the start of `rest`, whose first eight bytes
/// are `word` (little-endian), read at once: `None` for anything else (an error included), which
/// [`read_uleb_groups`] then reads or refuses.
#[inline(always)]
fn read_uleb_word(rest: &[u8], word: u64, max: u64) -> Option<(u64, usize)> {
    let ends = !word & 0x8080_8080_8080_8080;
    let (value, len) = if ends != 0 {
        // The first byte without the continuation bit is the last one: 1 to 8 bytes, all of
        // them under `mask`.
        let mask = ends ^ (ends - 1);
        let kept = word & mask;
        // Canonical: the last byte is not zero (the caller read one-byte values already).
        if kept & !(mask >> 8) == 0 {
            return None;
        }
        (
            gather_groups(kept),
            (ends.trailing_zeros() as usize + 1) / 8,
        )
    } else {
        // 9 or 10 bytes: the ninth holds bits 56..63, a tenth only bit 63 (and must be 1).
        let low = gather_groups(word);
        match *rest.get(8)? {
            ninth @ 0x01..=0x7f => (low | (u64::from(ninth) << 56), 9),
            ninth @ 0x80..=0xff if rest.get(9) == Some(&1) => {
                (low | (u64::from(ninth & 0x7f) << 56) | (1 << 63), 10)
            }
            _ => return None,
        }
    };
    if value > max {
        return None;
    }
    Some((value, len))
}

/// The general case of [`read_uleb`]: byte by byte, every error.
#[inline(never)]
fn read_uleb_groups(
    input: &[u8],
    start: usize,
    field: Field,
    max: u64,
) -> Result<(u64, usize), DecodeError> {
    let overflow = DecodeError::Overflow {
        field,
        index: start,
        max,
    };
    let mut value = 0u64;
    let mut shift = 0u32;
    let mut index = start;
    loop {
        let Some(&byte) = input.get(index) else {
            return Err(DecodeError::Truncated {
                field,
                index: input.len(),
            });
        };
        let group = u64::from(byte & 0x7f);
        if shift == 63 && group > 1 {
            return Err(overflow);
        }
        value |= group << shift;
        index += 1;
        if byte & 0x80 == 0 {
            if byte == 0 && index - start > 1 {
                return Err(DecodeError::NonCanonical {
                    field,
                    index: start,
                });
            }
            break;
        }
        shift += 7;
        if shift > 63 {
            return Err(overflow);
        }
    }
    if value > max {
        return Err(overflow);
    }
    Ok((value, index - start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdid::COUNTER_MAX;
    use crate::gdid::tests::fixtures;

    fn id(era: u32, authority: u8, counter: u64) -> Gdid {
        Gdid::from_parts(era, authority, counter).unwrap()
    }

    fn leb(g: Gdid) -> Vec<u8> {
        let mut out = Vec::new();
        g.encode_leb(&mut out);
        out
    }

    fn compact(g: Gdid) -> Vec<u8> {
        let mut out = Vec::new();
        g.encode_compact(&mut out);
        out
    }

    #[test]
    fn specification_examples() {
        assert_eq!(leb(id(5, 0, 123)), [0x05, 0x7b]);
        assert_eq!(leb(id(0, 0, 128)), [0x00, 0x80, 0x01]);
        assert_eq!(compact(id(5, 0, 123)), [0x05, 0xb0, 0x0f]);
        assert_eq!(compact(id(5, 3, 123)), [0x05, 0xb3, 0x0f]);
        assert_eq!(leb(id(5, 3, 123)).len(), 10);
        assert_eq!(compact(id(127, 15, (1 << 31) - 1)).len(), 6);
    }

    #[test]
    fn uleb_len_matches_every_seven_bit_boundary() {
        assert_eq!(uleb_len(0), 1);
        for groups in 1..=9u32 {
            let boundary = 1u64 << (7 * groups);
            assert_eq!(uleb_len(boundary - 1), groups as usize);
            assert_eq!(uleb_len(boundary), groups as usize + 1);
        }
        assert_eq!(uleb_len(u64::MAX), 10);
    }

    #[test]
    fn both_forms_round_trip_at_every_boundary_with_their_exact_length() {
        for g in fixtures() {
            for (bytes, len, decode) in [
                (leb(g), g.leb_len(), Gdid::decode_leb as fn(&[u8]) -> _),
                (
                    compact(g),
                    g.compact_len(),
                    Gdid::decode_compact as fn(&[u8]) -> _,
                ),
            ] {
                assert_eq!(bytes.len(), len);
                assert_eq!(decode(&bytes), Ok((g, len)), "{g} from {bytes:02x?}");
                // A following byte is not consumed.
                let mut longer = bytes.clone();
                longer.push(0xff);
                assert_eq!(decode(&longer), Ok((g, len)));
                // Every strict prefix is truncated.
                for cut in 0..len {
                    assert!(
                        matches!(decode(&bytes[..cut]), Err(DecodeError::Truncated { .. })),
                        "{g} cut at {cut}"
                    );
                }
            }
        }
    }

    #[test]
    fn slices_get_the_same_bytes_and_short_slices_an_error() {
        for g in fixtures() {
            let mut out = [0u8; Gdid::VARINT_MAX_LEN];
            let n = g.write_leb(&mut out).unwrap();
            assert_eq!(&out[..n], leb(g));
            let n = g.write_compact(&mut out).unwrap();
            assert_eq!(&out[..n], compact(g));
            let mut short = vec![0u8; g.leb_len() - 1];
            assert_eq!(
                g.write_leb(&mut short),
                Err(BufferTooSmall {
                    needed: g.leb_len(),
                    available: g.leb_len() - 1
                })
            );
        }
    }

    #[test]
    fn non_canonical_encodings_are_rejected() {
        // era 5 written in two bytes
        assert_eq!(
            Gdid::decode_leb(&[0x85, 0x00, 0x01]),
            Err(DecodeError::NonCanonical {
                field: Field::Era,
                index: 0
            })
        );
        // id64 0 written in two bytes
        assert_eq!(
            Gdid::decode_compact(&[0x00, 0x80, 0x00]),
            Err(DecodeError::NonCanonical {
                field: Field::CounterAndAuthority,
                index: 1
            })
        );
    }

    #[test]
    fn overflows_are_rejected() {
        // era = 2^32 (5 bytes, canonical, but not a u32)
        assert_eq!(
            Gdid::decode_leb(&[0x80, 0x80, 0x80, 0x80, 0x10, 0x00]),
            Err(DecodeError::Overflow {
                field: Field::Era,
                index: 0,
                max: u32::MAX.into()
            })
        );
        // era = u32::MAX is fine
        assert_eq!(
            Gdid::decode_leb(&[0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]),
            Ok((Gdid::from_raw(u32::MAX, 0), 6))
        );
        // id64 = 2^64 (10th byte 0x02)
        let mut bytes = vec![0x00];
        bytes.extend([0x80; 9]);
        bytes.push(0x02);
        assert!(matches!(
            Gdid::decode_leb(&bytes),
            Err(DecodeError::Overflow {
                field: Field::Id64,
                index: 1,
                ..
            })
        ));
        // id64 = u64::MAX is fine in both forms
        let mut bytes = vec![0x00];
        bytes.extend([0xff; 9]);
        bytes.push(0x01);
        assert_eq!(
            Gdid::decode_leb(&bytes),
            Ok((Gdid::from_raw(0, u64::MAX), 11))
        );
        assert_eq!(
            Gdid::decode_compact(&bytes),
            Ok((id(0, 15, COUNTER_MAX), 11))
        );
    }

    /// A small deterministic generator (xorshift64*), so the tests need no dependency.
    fn pseudo_random(seed: u64) -> impl Iterator<Item = u64> {
        let mut state = seed | 1;
        core::iter::repeat_with(move || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            state.wrapping_mul(0x2545_f491_4f6c_dd1d)
        })
    }

    /// Random byte strings of `N`: a quarter of the bytes are 0x80 (a continuation with no
    /// bits), a quarter are `other`, the rest random; so long forms turn up.
    fn biased_bytes<const N: usize>(seed: u64, other: u8) -> impl Iterator<Item = [u8; N]> {
        let mut random = pseudo_random(seed);
        core::iter::repeat_with(move || {
            core::array::from_fn(|_| {
                let r = random.next().unwrap();
                match r % 4 {
                    0 => 0x80,
                    1 => other,
                    _ => r.to_le_bytes()[1],
                }
            })
        })
    }

    /// Every 7-bit boundary and its neighbours, 0, `u64::MAX`, and random values of every width.
    fn interesting_values() -> Vec<u64> {
        let mut values = vec![0, 1, u64::MAX, u64::MAX - 1, 1 << 63];
        for shift in (7..64).step_by(7) {
            let boundary = 1u64 << shift;
            values.extend([boundary - 1, boundary, boundary + 1]);
        }
        values.extend(pseudo_random(7).take(20_000).map(|r| r >> (r % 64)));
        values
    }

    #[test]
    fn the_word_writer_matches_the_byte_loop() {
        for value in interesting_values() {
            let mut expected = [0u8; 10];
            let len = put_uleb(&mut expected, value);
            assert_eq!(len, uleb_len(value), "{value}");
            let mut out = [0xaau8; 10];
            put_uleb_exact(&mut out[..len], value);
            assert_eq!(out[..len], expected[..len], "{value}");
            assert!(
                out[len..].iter().all(|&b| b == 0xaa),
                "{value}: wrote past its length"
            );
        }
    }

    #[test]
    fn the_word_reader_matches_the_byte_loop() {
        let check = |input: &[u8]| {
            for (field, max) in [(Field::Era, u64::from(u32::MAX)), (Field::Id64, u64::MAX)] {
                let expected = read_uleb_groups(input, 0, field, max);
                assert_eq!(read_uleb(input, 0, field, max), expected, "{input:02x?}");
                if let Some(word) = input.first_chunk::<8>() {
                    let word = u64::from_le_bytes(*word);
                    if input[0] >= 0x80 {
                        if let Some(found) = read_uleb_word(input, word, max) {
                            assert_eq!(Ok(found), expected, "{input:02x?}");
                        }
                    }
                }
            }
        };
        for value in interesting_values() {
            let mut bytes = [0u8; 12];
            let len = put_uleb(&mut bytes, value);
            for end in 0..=12 {
                check(&bytes[..end]);
            }
            // Followed by continuation bytes, by a zero, and as an overlong form.
            bytes[len..].fill(0x80);
            check(&bytes);
            if len < 10 {
                bytes[len - 1] |= 0x80;
                bytes[len] = 0;
                check(&bytes);
            }
        }
        // Random bytes, biased to continuation bytes so that long forms turn up.
        for bytes in biased_bytes::<12>(11, 0xff).take(50_000) {
            check(&bytes);
            check(&bytes[..9]);
        }
    }

    /// `Form::decode` (the fast path in registers) decides exactly as the general decoder,
    /// errors included, on encodings of every length, their prefixes and random bytes.
    #[test]
    fn the_fast_decoder_agrees_with_the_general_one() {
        let check = |input: &[u8]| {
            for form in [Form::Leb, Form::Compact] {
                assert_eq!(
                    form.decode(input),
                    form.decode_general(input),
                    "{input:02x?}"
                );
            }
        };
        let values = interesting_values();
        let eras = values
            .iter()
            .map(|v| v >> 29)
            .chain([u64::from(u32::MAX) + 1]);
        for (era, &packed) in eras.zip(values.iter().rev()) {
            let mut bytes = [0u8; 24];
            let era_len = put_uleb(&mut bytes, era);
            let len = era_len + put_uleb(&mut bytes[era_len..], packed);
            for end in 0..=len + 1 {
                check(&bytes[..end]);
            }
            check(&bytes);
        }
        for bytes in biased_bytes::<16>(13, 0x00).take(50_000) {
            for end in [1, 2, 3, 7, 9, 11, 16] {
                check(&bytes[..end]);
            }
        }
    }

    #[test]
    fn empty_input_is_truncated_in_the_era() {
        assert_eq!(
            Gdid::decode_leb(&[]),
            Err(DecodeError::Truncated {
                field: Field::Era,
                index: 0
            })
        );
        assert_eq!(
            Gdid::decode_compact(&[0x01]),
            Err(DecodeError::Truncated {
                field: Field::CounterAndAuthority,
                index: 1
            })
        );
    }
}
