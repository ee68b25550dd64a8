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
use crate::gdid::{COUNTER_MAX, Gdid};

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
            Form::Compact => (id.counter() << 4) | id.authority() as u64,
        }
    }

    const fn unpack(self, era: u32, packed: u64) -> Gdid {
        match self {
            Form::Leb => Gdid::from_raw(era, packed),
            // `packed >> 4` is at most 2^60 - 1 = COUNTER_MAX: every u64 is a valid packing.
            Form::Compact => Gdid::from_raw(
                era,
                ((packed & 0xf) << Gdid::COUNTER_BITS) | ((packed >> 4) & COUNTER_MAX),
            ),
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

    fn write(self, id: &Gdid, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        let needed = self.len(id);
        if out.len() < needed {
            return Err(BufferTooSmall {
                needed,
                available: out.len(),
            });
        }
        Ok(self.write_unchecked(id, out))
    }

    /// Writes into `out`, which holds at least `self.len(id)` bytes.
    fn write_unchecked(self, id: &Gdid, out: &mut [u8]) -> usize {
        let era_len = put_uleb(out, u64::from(id.era()));
        era_len + put_uleb(&mut out[era_len..], self.packed(id))
    }

    fn encode(self, id: &Gdid, buf: &mut impl BufMut) {
        let mut scratch = [0u8; Gdid::VARINT_MAX_LEN];
        let len = self.write_unchecked(id, &mut scratch);
        buf.put_slice(&scratch[..len]);
    }

    fn decode(self, input: &[u8]) -> Result<(Gdid, usize), DecodeError> {
        let (era, era_len) = read_uleb(input, 0, Field::Era, u64::from(u32::MAX))?;
        let (packed, packed_len) = read_uleb(input, era_len, self.field(), u64::MAX)?;
        // `read_uleb` bounded the era by u32::MAX.
        #[allow(clippy::cast_possible_truncation)]
        let era = era as u32;
        Ok((self.unpack(era, packed), era_len + packed_len))
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
    pub fn encode_leb(&self, buf: &mut impl BufMut) {
        Form::Leb.encode(self, buf);
    }

    /// Appends the `compact` form (LEB128 era, LEB128 of `counter << 4 | authority`) to `buf`.
    ///
    /// # Panics
    ///
    /// As [`BufMut::put_slice`]: when `buf` cannot hold [`compact_len`](Self::compact_len) more
    /// bytes.
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
    pub fn write_leb(&self, out: &mut [u8]) -> Result<usize, BufferTooSmall> {
        Form::Leb.write(self, out)
    }

    /// Writes the `compact` form at the start of `out` and returns its length.
    ///
    /// # Errors
    ///
    /// [`BufferTooSmall`] when `out` is shorter than [`compact_len`](Self::compact_len); nothing
    /// is written then.
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
    pub fn decode_leb(input: &[u8]) -> Result<(Gdid, usize), DecodeError> {
        Form::Leb.decode(input)
    }

    /// Reads a `compact` form from the start of `input`; returns the id and the bytes consumed.
    ///
    /// # Errors
    ///
    /// As [`decode_leb`](Self::decode_leb).
    pub fn decode_compact(input: &[u8]) -> Result<(Gdid, usize), DecodeError> {
        Form::Compact.decode(input)
    }
}

/// Length of the unsigned LEB128 of `value`: one byte per started group of 7 bits.
const fn uleb_len(value: u64) -> usize {
    let bits = 64 - (value | 1).leading_zeros();
    bits.div_ceil(7) as usize
}

/// Writes `value` at the start of `out`, which the caller has checked is long enough.
///
/// Hand-written rather than the `leb128` crate's `write::unsigned`: that one writes each byte
/// through `io::Write` (a `memcpy` call per byte) and measured 2.2-4.3× slower here
/// (docs/performance.md, "Benchmarks").
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
    // Most eras and many ids fit in one byte.
    if let Some(&byte) = input.get(start) {
        if byte < 0x80 && u64::from(byte) <= max {
            return Ok((u64::from(byte), 1));
        }
    }
    read_uleb_groups(input, start, field, max)
}

/// The general case of [`read_uleb`].
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
