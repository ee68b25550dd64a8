//! The [`Gdid`] value type: layout, construction, field access and ordering.

use core::cmp::Ordering;

use crate::error::{InvalidLength, InvalidParts};

/// The largest counter a GDID can hold: `2^60 - 1`.
pub const COUNTER_MAX: u64 = (1 << 60) - 1;

/// The largest authority number: `15` (4 bits).
pub const AUTHORITY_MAX: u8 = 15;

/// A global distributed id: era (32 bits) · authority (4 bits) · counter (60 bits).
///
/// A `Gdid` is stored as its 12-byte big-endian form, so the derived `Ord`, the order of
/// [`as_bytes`](Self::as_bytes) and the order of a `BINARY(12)`/`BYTEA`/`BLOB` column all agree:
/// era first, then authority, then counter.
///
/// # Layout
///
/// ```text
/// byte   0 1 2 3 | 4 ............................ 11
///        era     | id64 = authority << 60 | counter
///        (u32 BE)| (u64 BE)
/// ```
///
/// # Examples
///
/// ```
/// use gdid_core::Gdid;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let id = Gdid::from_parts(1293, 3, 57)?;
/// assert_eq!(id.to_string(), "1293:3:57");
/// assert_eq!(format!("{id:x}"), "0000050d3000000000000039");
/// assert_eq!("1293:3:57".parse::<Gdid>()?, id);
/// assert_eq!((id.era(), id.authority(), id.counter()), (1293, 3, 57));
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
// Aligned to 4 so that moving an id (in a `Result`, say) is one 8-byte and one 4-byte access
// rather than split unaligned ones: `from_slice` 8.6 → 3.1 ns measured. Size stays 12.
#[repr(C, align(4))]
// 12 bytes at offset 0 and no padding: any 12 bytes are an id, and an id is its 12 bytes, so
// zerocopy can view 4-aligned bytes as ids (feature `zerocopy`; its derives need no `unsafe` here).
#[cfg_attr(
    feature = "zerocopy",
    derive(
        zerocopy::FromBytes,
        zerocopy::IntoBytes,
        zerocopy::KnownLayout,
        zerocopy::Immutable
    )
)]
pub struct Gdid(pub(crate) [u8; Gdid::SIZE]);

impl Gdid {
    /// Size of the fixed binary form in bytes.
    pub const SIZE: usize = 12;
    /// Offset of the big-endian era in the 12-byte form.
    pub const ERA_OFFSET: usize = 0;
    /// Size of the era in bytes.
    pub const ERA_SIZE: usize = 4;
    /// Offset of the big-endian `id64` (authority and counter) in the 12-byte form.
    pub const ID64_OFFSET: usize = 4;
    /// Size of `id64` in bytes.
    pub const ID64_SIZE: usize = 8;
    /// Number of bits of the counter inside `id64`.
    pub const COUNTER_BITS: u32 = 60;

    /// The all-zero id. It is never issued by an authority, and it is the [`Default`].
    pub const ZERO: Gdid = Gdid([0; Gdid::SIZE]);

    /// The greatest possible id: era `u32::MAX`, authority 15, counter [`COUNTER_MAX`].
    pub const MAX: Gdid = Gdid([0xff; Gdid::SIZE]);

    /// Builds an id from its three fields, checking each.
    ///
    /// # Errors
    ///
    /// [`InvalidParts`] when `authority > 15` or `counter > COUNTER_MAX`. Nothing is masked.
    ///
    /// # Examples
    ///
    /// ```
    /// use gdid_core::{Gdid, COUNTER_MAX};
    ///
    /// assert!(Gdid::from_parts(0, 15, COUNTER_MAX).is_ok());
    /// assert_eq!(
    ///     Gdid::from_parts(0, 16, 1).unwrap_err().to_string(),
    ///     "authority 16 is out of range: the maximum is 15"
    /// );
    /// ```
    #[inline]
    pub const fn from_parts(era: u32, authority: u8, counter: u64) -> Result<Gdid, InvalidParts> {
        if authority > AUTHORITY_MAX {
            return Err(InvalidParts::Authority(authority));
        }
        if counter > COUNTER_MAX {
            return Err(InvalidParts::Counter(counter));
        }
        Ok(Gdid::from_raw(
            era,
            ((authority as u64) << Gdid::COUNTER_BITS) | counter,
        ))
    }

    /// Builds an id from the era and the raw `id64` (`authority << 60 | counter`).
    ///
    /// Every `(era, id64)` pair is a valid id, so this cannot fail.
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// let id = Gdid::from_raw(0x0102_0304, 0xfaca_ca00_aa55_aa55);
    /// assert_eq!(id.as_bytes(), &[1, 2, 3, 4, 0xfa, 0xca, 0xca, 0, 0xaa, 0x55, 0xaa, 0x55]);
    /// assert_eq!(id.authority(), 15);
    /// ```
    #[inline]
    pub const fn from_raw(era: u32, id64: u64) -> Gdid {
        let e = era.to_be_bytes();
        let i = id64.to_be_bytes();
        Gdid([
            e[0], e[1], e[2], e[3], i[0], i[1], i[2], i[3], i[4], i[5], i[6], i[7],
        ])
    }

    /// Builds an id from its 12-byte big-endian form. Every array is a valid id.
    #[inline]
    pub const fn from_bytes(bytes: [u8; Gdid::SIZE]) -> Gdid {
        Gdid(bytes)
    }

    /// Builds an id from a slice that must be exactly 12 bytes long.
    ///
    /// # Errors
    ///
    /// [`InvalidLength`] ("expected 12 bytes, found N") for any other length.
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// assert_eq!(Gdid::from_slice(&[0; 12]), Ok(Gdid::ZERO));
    /// assert_eq!(Gdid::from_slice(&[0; 11]).unwrap_err().to_string(), "expected 12 bytes, found 11");
    /// ```
    #[inline]
    pub const fn from_slice(bytes: &[u8]) -> Result<Gdid, InvalidLength> {
        match bytes.first_chunk::<{ Gdid::SIZE }>() {
            Some(array) if bytes.len() == Gdid::SIZE => Ok(Gdid(*array)),
            _ => Err(InvalidLength {
                expected: Gdid::SIZE,
                found: bytes.len(),
            }),
        }
    }

    /// The 12-byte big-endian form, borrowed.
    #[inline]
    pub const fn as_bytes(&self) -> &[u8; Gdid::SIZE] {
        &self.0
    }

    /// The 12-byte big-endian form, copied.
    #[inline]
    pub const fn to_bytes(self) -> [u8; Gdid::SIZE] {
        self.0
    }

    /// The 12-byte big-endian form, consuming the id.
    #[inline]
    pub const fn into_bytes(self) -> [u8; Gdid::SIZE] {
        self.0
    }

    /// The era: the high 32 bits.
    #[inline]
    pub const fn era(&self) -> u32 {
        let b = &self.0;
        u32::from_be_bytes([b[0], b[1], b[2], b[3]])
    }

    /// The low 64 bits: `authority << 60 | counter`.
    #[inline]
    pub const fn id64(&self) -> u64 {
        let b = &self.0;
        u64::from_be_bytes([b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11]])
    }

    /// The authority that issued the id, `0..=15`.
    #[inline]
    pub const fn authority(&self) -> u8 {
        self.0[Gdid::ID64_OFFSET] >> 4
    }

    /// The counter, `0..=COUNTER_MAX`.
    #[inline]
    pub const fn counter(&self) -> u64 {
        self.id64() & COUNTER_MAX
    }

    /// `true` only for [`Gdid::ZERO`].
    #[inline]
    pub const fn is_zero(&self) -> bool {
        self.era() == 0 && self.id64() == 0
    }

    /// NFX/Azos's "no id" convention, asked for: `None` for [`Gdid::ZERO`], `Some(self)` otherwise.
    ///
    /// `Option<Gdid>` is 16 bytes, not 12: no 12-byte type can hold every non-zero id and leave
    /// a niche for `None` (Rust's niches are invalid values of one scalar field, and a
    /// `NonZeroU64` id64 would also exclude valid ids such as `5:0:0`), so there is no
    /// `NonZeroGdid`. Where 12 bytes per id matter, store `Gdid` and call this at the edge.
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// assert_eq!(Gdid::ZERO.non_zero(), None);
    /// assert_eq!(Gdid::MAX.non_zero(), Some(Gdid::MAX));
    /// assert_eq!(Gdid::from_raw(5, 0).non_zero(), Some(Gdid::from_raw(5, 0)));
    /// ```
    #[inline]
    pub const fn non_zero(self) -> Option<Gdid> {
        if self.is_zero() { None } else { Some(self) }
    }

    /// Compares by (era, counter), ignoring the authority.
    ///
    /// `Ord` puts the authority before the counter (that is the byte order). For range work across
    /// authorities ("everything issued after counter N of era E") this comparison is the one to use.
    ///
    /// ```
    /// use gdid_core::Gdid;
    /// use std::cmp::Ordering;
    ///
    /// # fn main() -> Result<(), gdid_core::InvalidParts> {
    /// let a = Gdid::from_parts(1, 9, 10)?;
    /// let b = Gdid::from_parts(1, 2, 20)?;
    /// assert_eq!(a.cmp(&b), Ordering::Greater);
    /// assert_eq!(a.cmp_ignoring_authority(&b), Ordering::Less);
    /// # Ok(())
    /// # }
    /// ```
    #[inline]
    pub const fn cmp_ignoring_authority(&self, other: &Gdid) -> Ordering {
        let (a, b) = (self.era(), other.era());
        if a != b {
            return if a < b {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (a, b) = (self.counter(), other.counter());
        if a < b {
            Ordering::Less
        } else if a > b {
            Ordering::Greater
        } else {
            Ordering::Equal
        }
    }
}

impl From<[u8; Gdid::SIZE]> for Gdid {
    #[inline]
    fn from(bytes: [u8; Gdid::SIZE]) -> Self {
        Gdid(bytes)
    }
}

impl From<Gdid> for [u8; Gdid::SIZE] {
    #[inline]
    fn from(id: Gdid) -> Self {
        id.0
    }
}

impl TryFrom<&[u8]> for Gdid {
    type Error = InvalidLength;

    #[inline]
    fn try_from(bytes: &[u8]) -> Result<Self, Self::Error> {
        Gdid::from_slice(bytes)
    }
}

impl AsRef<[u8]> for Gdid {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Ids at every interesting boundary, shared by the unit tests of every module.
    pub(crate) fn fixtures() -> impl Iterator<Item = Gdid> {
        let eras = [0, 1, 127, 128, 16_383, 16_384, u32::MAX - 1, u32::MAX];
        let authorities = [0, 1, 7, 8, 15];
        let mut counters = vec![0, 1, COUNTER_MAX - 1, COUNTER_MAX];
        for shift in (7..60).step_by(7) {
            counters.extend([(1u64 << shift) - 1, 1u64 << shift]);
        }
        eras.into_iter().flat_map(move |era| {
            let counters = counters.clone();
            authorities.into_iter().flat_map(move |authority| {
                counters
                    .clone()
                    .into_iter()
                    .map(move |counter| Gdid::from_parts(era, authority, counter).unwrap())
            })
        })
    }

    #[test]
    fn byte_layout_matches_the_specification() {
        let id = Gdid::from_raw(0x0102_0304, 0xfaca_ca00_aa55_aa55);
        assert_eq!(
            id.to_bytes(),
            [
                0x01, 0x02, 0x03, 0x04, 0xfa, 0xca, 0xca, 0x00, 0xaa, 0x55, 0xaa, 0x55
            ]
        );
        assert_eq!(id.era(), 0x0102_0304);
        assert_eq!(id.id64(), 0xfaca_ca00_aa55_aa55);
        assert_eq!(id.authority(), 0xf);
        assert_eq!(id.counter(), 0x0aca_ca00_aa55_aa55);
    }

    #[test]
    fn parts_round_trip_at_every_boundary() {
        for id in fixtures() {
            let again = Gdid::from_parts(id.era(), id.authority(), id.counter()).unwrap();
            assert_eq!(again, id);
            assert_eq!(Gdid::from_raw(id.era(), id.id64()), id);
            assert_eq!(Gdid::from_bytes(id.to_bytes()), id);
            assert_eq!(Gdid::try_from(&id.as_bytes()[..]), Ok(id));
        }
    }

    #[test]
    fn parts_out_of_range_are_rejected_not_masked() {
        assert_eq!(Gdid::from_parts(0, 16, 0), Err(InvalidParts::Authority(16)));
        assert_eq!(
            Gdid::from_parts(0, 255, 0),
            Err(InvalidParts::Authority(255))
        );
        assert_eq!(
            Gdid::from_parts(0, 0, COUNTER_MAX + 1),
            Err(InvalidParts::Counter(COUNTER_MAX + 1))
        );
        assert_eq!(
            Gdid::from_parts(0, 0, u64::MAX),
            Err(InvalidParts::Counter(u64::MAX))
        );
    }

    #[test]
    fn twelve_bytes_aligned_to_four() {
        assert_eq!(core::mem::size_of::<Gdid>(), 12);
        assert_eq!(core::mem::align_of::<Gdid>(), 4);
        assert_eq!(core::mem::size_of::<Option<Gdid>>(), 16);
    }

    #[test]
    fn zero_and_max() {
        assert!(Gdid::ZERO.is_zero());
        assert_eq!(Gdid::default(), Gdid::ZERO);
        assert!(!Gdid::from_parts(0, 0, 1).unwrap().is_zero());
        assert!(!Gdid::from_parts(1, 0, 0).unwrap().is_zero());
        assert!(!Gdid::from_parts(0, 1, 0).unwrap().is_zero());
        assert_eq!(
            Gdid::MAX,
            Gdid::from_parts(u32::MAX, 15, COUNTER_MAX).unwrap()
        );
    }

    #[test]
    fn slices_of_the_wrong_length_are_rejected_with_the_length() {
        for len in [0, 1, 11, 13, 24] {
            let err = Gdid::try_from(&vec![0u8; len][..]).unwrap_err();
            assert_eq!(err.to_string(), format!("expected 12 bytes, found {len}"));
        }
    }

    #[test]
    fn ord_is_era_then_authority_then_counter() {
        let ids: Vec<Gdid> = fixtures().collect();
        for a in &ids {
            for b in ids.iter().step_by(7) {
                let by_fields = (a.era(), a.authority(), a.counter()).cmp(&(
                    b.era(),
                    b.authority(),
                    b.counter(),
                ));
                assert_eq!(a.cmp(b), by_fields);
                assert_eq!(a.as_bytes().cmp(b.as_bytes()), by_fields);
                assert_eq!(
                    a.cmp_ignoring_authority(b),
                    (a.era(), a.counter()).cmp(&(b.era(), b.counter()))
                );
            }
        }
    }
}
