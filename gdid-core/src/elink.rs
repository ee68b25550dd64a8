//! The ELink form of NFX/Azos: an id (and optional metadata bytes) spelled in two-letter syllables.
//!
//! An ELink ("electronic link") is meant to be read aloud or typed from paper:
//! `AUCKIR-ABASVITILT` is the GDID `1280:2:8902382`. It is bit-compatible with Azos
//! `Azos.Data.ELink` (and NFX `NFX.ELink`): links either side writes decode on the other.
//!
//! # Layout
//!
//! One syllable per byte, from a table of 256 upper-case two-letter syllables:
//!
//! ```text
//! [lead1][lead2][csum] - [era: eraLen bytes LE][id64: idLen bytes LE] {- [metadata bytes]}
//!
//! lead1 = seed << 4 | authority           seed 0..=15: 16 spellings of every link
//! mask  = seed << 4 | seed                xored into every byte after lead1
//! lead2 = (eraLen << 4 | idLen) ^ mask    eraLen 0..=4 (0 for era 0), idLen 1..=8 (of the counter)
//! csum  = crc ^ mask                      crc = ((era ×wrapping 0xaa55aa55) ^ id64
//!                                                ^ metadata_len × 0xee77) % 251
//! ```
//!
//! A `-` stands before id byte 4 when there are more than 5 id bytes, and before the metadata.
//! Decoding ignores case, every `-` and every space.
//!
//! Any syllable sequence may spell a word someone finds rude: encode the id again with another
//! seed. (Azos picks a random seed; here the caller chooses, so output is reproducible.)

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;

use crate::gdid::Gdid;

/// The 256 syllables of Azos's `ELink.ALPHABET_SOURCE`, in its order (16 a row): syllable `i`
/// spells the byte value `i`.
const ALPHABET: &[u8; 512] = b"\
    ABACAUAKADASAMALAZAGANAFAPAQARAX\
    AIAJATAWBABEBIBOBUBRCACBCDCECICH\
    COCUCRCKDADBDEDIDODUEBEDEFEGEJEK\
    ELEMENEPEQERESETEVEWEXEZFAFEFIFO\
    FUFTFZFLGAGEGIGLGMGNGOGPGRGUGVGW\
    GXGZHAHEHIHMHNHOHPHTHUIBICIDIFIG\
    ITIKIJILIMINIPIRISIVIWIXIZJAJEJI\
    JOJZJUJKJCJNKAKEKOKUKIKRKLKNKYLA\
    LELILMLNLOLRLSLTLULVLYLZMAMBMCMD\
    MEMIMOMUMRMNMYMZNANENINMNONUNYNX\
    NZOBOCODOFOAOGOHOIOJOKOLOMOPOROS\
    OTOVOWOXOYOZPAPEPIPOPSPUPYPZQUQA\
    RARERIRORURYSASESISOSUSYSHSMSNSB\
    SDSTSVSQTATETITOTMTNTRTSTUTVTYTZ\
    UBUCUDUFUGUKULUMUNUPURUZVAVEVIVO\
    VUZAZEZIZOZUWAWEWIWOWUWRYAYEYOXA";

/// No syllable: the sentinel of [`SYLLABLE_VALUES`].
const NOT_A_SYLLABLE: u16 = 0xffff;

/// The byte each two-letter pair spells, indexed by `letter(first) * 26 + letter(second)`;
/// [`NOT_A_SYLLABLE`] for the 420 pairs that are not in the alphabet.
const SYLLABLE_VALUES: [u16; 26 * 26] = {
    let mut table = [NOT_A_SYLLABLE; 26 * 26];
    let mut value: u16 = 0;
    while value < 256 {
        let at = 2 * value as usize;
        let first = (ALPHABET[at] - b'A') as usize;
        let second = (ALPHABET[at + 1] - b'A') as usize;
        table[first * 26 + second] = value;
        value += 1;
    }
    table
};

/// The checksum's multiplier for the era (a wrapping 32-bit multiply, as in C#'s `uint * uint`).
const ERA_FACTOR: u32 = 0xaa55_aa55;
/// The checksum's multiplier for the metadata length.
const METADATA_FACTOR: u64 = 0xee77;
/// The checksum is a remainder modulo this prime.
const CHECKSUM_MODULUS: u64 = 251;

/// Three header syllables and the dash after them.
const HEADER_LEN: usize = 3 * 2 + 1;

impl Gdid {
    /// Longest ELink of an id without metadata: 12 syllables of era and id, 3 of header, 2 dashes.
    pub const ELINK_MAX_LEN: usize = HEADER_LEN + 2 * (Gdid::ERA_SIZE + Gdid::ID64_SIZE) + 1;

    /// Writes the ELink of this id (no metadata) with `seed` into `buf`; never allocates.
    ///
    /// Only the low 4 bits of `seed` count, as in Azos, so a random byte is a fine seed. Each
    /// of the 16 seeds spells the id differently; all of them decode to the same id.
    ///
    /// # Examples
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let id: Gdid = "1280:2:8902382".parse()?;
    /// let mut buf = [0u8; Gdid::ELINK_MAX_LEN];
    /// assert_eq!(id.encode_elink(0, &mut buf), "AUCKIR-ABASVITILT");
    /// assert_eq!(id.encode_elink(1, &mut buf), "ATENKA-AJBAXASEMY");
    /// # Ok(())
    /// # }
    /// ```
    pub fn encode_elink<'b>(&self, seed: u8, buf: &'b mut [u8; Gdid::ELINK_MAX_LEN]) -> &'b str {
        let len = write_id(*self, seed, None, buf);
        // Only syllables of ALPHABET and dashes were written: ASCII.
        core::str::from_utf8(&buf[..len]).unwrap_or_default()
    }

    /// The ELink of this id (no metadata) with `seed` (its low 4 bits).
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let id: Gdid = "1:1:123".parse()?;
    /// assert_eq!(id.to_elink(15), "ZAVIFA-YOLO");
    /// assert_eq!(Gdid::from_elink("zavifa-yolo")?, id);
    /// # Ok(())
    /// # }
    /// ```
    pub fn to_elink(&self, seed: u8) -> String {
        self.encode_elink(seed, &mut [0; Gdid::ELINK_MAX_LEN])
            .to_owned()
    }

    /// Reads the id of an ELink; metadata, if the link has any, is checked and dropped.
    ///
    /// Case, `-` and spaces are ignored. Use [`ELink::decode`] to keep the metadata. Never
    /// allocates.
    ///
    /// # Errors
    ///
    /// An [`ELinkError`] saying what is wrong and where (see [`ELink::decode`]).
    ///
    /// ```
    /// use gdid_core::{ELinkError, Gdid};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// assert_eq!(Gdid::from_elink("TUSHEK-TRTV")?, "7:12:0".parse()?);
    /// assert!(matches!(Gdid::from_elink("TUSHEK-TOTV"), Err(ELinkError::Checksum { .. })));
    /// # Ok(())
    /// # }
    /// ```
    pub fn from_elink(text: &str) -> Result<Gdid, ELinkError> {
        let mut bytes = [0u8; MAX_SYLLABLES];
        decode_into(text, &mut bytes).map(|decoded| decoded.id)
    }
}

/// An id with optional metadata bytes, as an ELink spells it.
///
/// Build one with [`ELink::new`] or [`ELink::with_metadata`] and spell it with
/// [`encode`](ELink::encode); read one with [`ELink::decode`] (or `str::parse`).
///
/// # Examples
///
/// ```
/// use gdid_core::{ELink, Gdid};
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let id: Gdid = "27:15:200100999666333000".parse()?;
/// let link = ELink::with_metadata(id, b"abc".to_vec())?;
/// assert_eq!(link.encode(1), "CHAGVU-ANHTUGIFNU-TVWETOUF-JOJKJU");
///
/// let read = ELink::decode("chagvu anhtugifnu tvwetouf jojkju")?;
/// assert_eq!((read.id(), read.metadata()), (id, &b"abc"[..]));
/// assert_eq!(read, link);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ELink {
    id: Gdid,
    metadata: Vec<u8>,
}

impl ELink {
    /// Longest text an ELink may have, in characters (Azos `MAX_LINK_CHAR_SIZE`).
    pub const MAX_LEN: usize = 1024;

    /// Number of seeds, hence of spellings of every link: 16.
    pub const SEEDS: u8 = 16;

    /// An ELink of `id` without metadata.
    pub const fn new(id: Gdid) -> ELink {
        ELink {
            id,
            metadata: Vec::new(),
        }
    }

    /// An ELink of `id` carrying `metadata`, bytes of the caller's choosing (a tenant, a type).
    ///
    /// Empty metadata is no metadata (a decoder cannot tell them apart: Azos writes a
    /// trailing `-` for empty metadata, which decodes as none).
    ///
    /// # Errors
    ///
    /// [`ELinkError::MetadataTooLong`] when the link would exceed [`ELink::MAX_LEN`]
    /// characters: 495 bytes always fit, 507 at most (for an id of era 0 and counter < 256).
    ///
    /// ```
    /// use gdid_core::{ELink, ELinkError, Gdid};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let link = ELink::with_metadata(Gdid::MAX, vec![7; 495])?;
    /// assert_eq!(link.encoded_len(), 1023);
    /// assert_eq!(
    ///     ELink::with_metadata(Gdid::MAX, vec![7; 496]),
    ///     Err(ELinkError::MetadataTooLong { length: 496, max: 495 })
    /// );
    /// # Ok(())
    /// # }
    /// ```
    pub fn with_metadata(id: Gdid, metadata: Vec<u8>) -> Result<ELink, ELinkError> {
        let max = max_metadata_len(id);
        if metadata.len() > max {
            return Err(ELinkError::MetadataTooLong {
                length: metadata.len(),
                max,
            });
        }
        Ok(ELink { id, metadata })
    }

    /// The id.
    pub const fn id(&self) -> Gdid {
        self.id
    }

    /// The metadata bytes; empty when there are none.
    pub fn metadata(&self) -> &[u8] {
        &self.metadata
    }

    /// The id and the metadata bytes.
    pub fn into_parts(self) -> (Gdid, Vec<u8>) {
        (self.id, self.metadata)
    }

    /// Length of the text [`encode`](Self::encode) writes, whatever the seed; at most
    /// [`ELink::MAX_LEN`].
    pub fn encoded_len(&self) -> usize {
        id_text_len(self.id) + metadata_text_len(self.metadata.len())
    }

    /// The link spelled with `seed` (its low 4 bits; each of the 16 spells it differently).
    ///
    /// ```
    /// use gdid_core::{ELink, Gdid};
    ///
    /// let link = ELink::with_metadata(Gdid::from_raw(0, 1), vec![0x01, 0xfe, 0xda, 0x05]).unwrap();
    /// for seed in 0..ELink::SEEDS {
    ///     assert_eq!(ELink::decode(&link.encode(seed)), Ok(link.clone()));
    /// }
    /// ```
    pub fn encode(&self, seed: u8) -> String {
        let mut text = String::with_capacity(self.encoded_len());
        self.encode_into(seed, &mut text);
        text
    }

    /// Appends the link spelled with `seed` to `out`.
    pub fn encode_into(&self, seed: u8, out: &mut String) {
        let metadata = (!self.metadata.is_empty()).then_some(self.metadata.as_slice());
        let mut buf = [0u8; Gdid::ELINK_MAX_LEN];
        let len = write_id(self.id, seed, metadata, &mut buf);
        out.reserve(len + metadata_text_len(self.metadata.len()));
        out.extend(buf[..len].iter().map(|&b| char::from(b)));
        if let Some(metadata) = metadata {
            let mask = mask(seed);
            out.push('-');
            for &byte in metadata {
                let [first, second] = syllable(byte ^ mask);
                out.push(char::from(first));
                out.push(char::from(second));
            }
        }
    }

    /// Reads an ELink: the id and the metadata bytes.
    ///
    /// Letters of either case; every `-` and space is ignored; at most [`ELink::MAX_LEN`]
    /// characters. Nothing else is accepted: no other whitespace, no other separator.
    ///
    /// # Errors
    ///
    /// An [`ELinkError`], checked in this order: [`TooLong`](ELinkError::TooLong),
    /// [`UnknownSyllable`](ELinkError::UnknownSyllable) (the first one, with its byte index),
    /// [`Empty`](ELinkError::Empty), [`OddLetters`](ELinkError::OddLetters),
    /// [`TooShort`](ELinkError::TooShort), [`SegmentLength`](ELinkError::SegmentLength),
    /// [`TooShort`](ELinkError::TooShort) again for the announced segments,
    /// [`Checksum`](ELinkError::Checksum) and [`MetadataTooLong`](ELinkError::MetadataTooLong).
    ///
    /// ```
    /// use gdid_core::{ELink, ELinkError};
    ///
    /// assert_eq!(
    ///     ELink::decode("PYYEOP-XXYOIWUFOBSHAMNE-GOOX").unwrap_err().to_string(),
    ///     "invalid ELink syllable \"XX\" at byte 7: not in the alphabet"
    /// );
    /// assert_eq!(
    ///     ELink::decode("CDHOAL-OKHIRAGNAFIPOMEP-UBBA").unwrap_err(),
    ///     ELinkError::Checksum { found: 22, computed: 185 }
    /// );
    /// ```
    pub fn decode(text: &str) -> Result<ELink, ELinkError> {
        let mut bytes = [0u8; MAX_SYLLABLES];
        let decoded = decode_into(text, &mut bytes)?;
        Ok(ELink {
            id: decoded.id,
            metadata: bytes[decoded.metadata_start..decoded.end].to_vec(),
        })
    }
}

impl FromStr for ELink {
    type Err = ELinkError;

    /// [`ELink::decode`].
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        ELink::decode(text)
    }
}

impl From<Gdid> for ELink {
    fn from(id: Gdid) -> Self {
        ELink::new(id)
    }
}

/// Text that is not an ELink, or metadata too long for one.
///
/// Byte indexes count from the start of the input as given, dashes and spaces included.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ELinkError {
    /// The input has more than [`ELink::MAX_LEN`] characters.
    #[error("an ELink has at most 1024 characters, found {found}")]
    TooLong {
        /// How many characters the input has.
        found: usize,
    },
    /// Two letters (or other characters) that are not a syllable of the alphabet.
    #[error("invalid ELink syllable \"{first}{second}\" at byte {index}: not in the alphabet")]
    UnknownSyllable {
        /// The first character of the pair.
        first: char,
        /// The second character of the pair.
        second: char,
        /// Byte index of the first character.
        index: usize,
    },
    /// The input holds no letters at all.
    #[error("empty ELink: expected syllables such as AIAIIW-IW")]
    Empty,
    /// The letters do not pair up: the last one is alone.
    #[error("the ELink has an odd number of letters: {character:?} at byte {index} has no pair")]
    OddLetters {
        /// The letter left alone.
        character: char,
        /// Its byte index.
        index: usize,
    },
    /// Fewer syllables than the header needs (4) or announces.
    #[error("the ELink is too short: expected at least {expected} syllables, found {found}")]
    TooShort {
        /// Syllables needed.
        expected: usize,
        /// Syllables found.
        found: usize,
    },
    /// The header announces an era of more than 4 bytes, or an id of 0 or more than 8 bytes.
    #[error(
        "the ELink header announces {era_len} era bytes (0 to 4) and {id_len} id bytes (1 to 8)"
    )]
    SegmentLength {
        /// Era bytes announced.
        era_len: u8,
        /// Id bytes announced.
        id_len: u8,
    },
    /// The checksum syllable does not match the content: a letter is wrong.
    #[error("ELink checksum mismatch: the link says {found}, its content sums to {computed}")]
    Checksum {
        /// The checksum the link carries (unmasked).
        found: u8,
        /// The checksum of the id and metadata read.
        computed: u8,
    },
    /// The metadata would make the link longer than [`ELink::MAX_LEN`] characters.
    #[error("{length} metadata bytes are too many for this id: at most {max} fit in an ELink")]
    MetadataTooLong {
        /// Metadata bytes given.
        length: usize,
        /// The most this id's link can carry.
        max: usize,
    },
}

/// Most syllables [`ELink::MAX_LEN`] characters can hold.
const MAX_SYLLABLES: usize = ELink::MAX_LEN / 2;

/// What [`decode_into`] read: the id, and where the metadata lies in the byte buffer.
struct Decoded {
    id: Gdid,
    metadata_start: usize,
    end: usize,
}

const fn mask(seed: u8) -> u8 {
    let seed = seed & 0x0f;
    (seed << 4) | seed
}

const fn syllable(byte: u8) -> [u8; 2] {
    let i = byte as usize * 2;
    [ALPHABET[i], ALPHABET[i + 1]]
}

/// Bytes needed for `value`, at least `min`.
const fn byte_len(value: u64, min: usize) -> usize {
    let bytes = (u64::BITS - value.leading_zeros()).div_ceil(8) as usize;
    if bytes < min { min } else { bytes }
}

/// The era bytes (0 for era 0) and id bytes (1 to 8, from the counter alone) of `id`.
const fn segment_lens(id: Gdid) -> (usize, usize) {
    (byte_len(id.era() as u64, 0), byte_len(id.counter(), 1))
}

/// Length of the link of `id` without metadata.
const fn id_text_len(id: Gdid) -> usize {
    let (era_len, id_len) = segment_lens(id);
    HEADER_LEN + 2 * (era_len + id_len) + if id_len > 5 { 1 } else { 0 }
}

/// Characters `len` metadata bytes add: a dash and a syllable each.
const fn metadata_text_len(len: usize) -> usize {
    if len == 0 { 0 } else { 1 + 2 * len }
}

/// The most metadata bytes the link of `id` can carry within [`ELink::MAX_LEN`].
const fn max_metadata_len(id: Gdid) -> usize {
    (ELink::MAX_LEN - id_text_len(id) - 1) / 2
}

/// The checksum of Azos `ELink.crc`.
const fn checksum(era: u32, id64: u64, metadata_len: usize) -> u8 {
    let sum = era.wrapping_mul(ERA_FACTOR) as u64 ^ id64 ^ (metadata_len as u64 * METADATA_FACTOR);
    // A remainder of 251 fits in a byte.
    #[allow(clippy::cast_possible_truncation)]
    let crc = (sum % CHECKSUM_MODULUS) as u8;
    crc
}

/// Writes the header, era and id syllables of `id` into `buf`; returns the length written.
///
/// `metadata` only counts for the checksum: [`ELink::encode_into`] appends its syllables.
fn write_id(
    id: Gdid,
    seed: u8,
    metadata: Option<&[u8]>,
    buf: &mut [u8; Gdid::ELINK_MAX_LEN],
) -> usize {
    let mask = mask(seed);
    let (era_len, id_len) = segment_lens(id);
    let (era, id64) = (id.era(), id.id64());
    let crc = checksum(era, id64, metadata.map_or(0, <[u8]>::len));
    // Both lengths are at most 8: the header byte is exact.
    #[allow(clippy::cast_possible_truncation)]
    let lens = ((era_len << 4) | id_len) as u8;

    let mut out = Writer { buf, len: 0 };
    out.syllable(((seed & 0x0f) << 4) | id.authority());
    out.syllable(lens ^ mask);
    out.syllable(crc ^ mask);
    out.dash();
    for &byte in &era.to_le_bytes()[..era_len] {
        out.syllable(byte ^ mask);
    }
    for (i, &byte) in id64.to_le_bytes()[..id_len].iter().enumerate() {
        if i == 4 && id_len > 5 {
            out.dash();
        }
        out.syllable(byte ^ mask);
    }
    out.len
}

/// Appends syllables and dashes to a buffer long enough for the longest link of an id.
struct Writer<'b> {
    buf: &'b mut [u8; Gdid::ELINK_MAX_LEN],
    len: usize,
}

impl Writer<'_> {
    fn syllable(&mut self, byte: u8) {
        self.buf[self.len..self.len + 2].copy_from_slice(&syllable(byte));
        self.len += 2;
    }

    fn dash(&mut self) {
        self.buf[self.len] = b'-';
        self.len += 1;
    }
}

/// Maps an ASCII letter of either case to 0..26; 0xff for any other byte.
const fn letter(byte: u8) -> u8 {
    match byte {
        b'A'..=b'Z' => byte - b'A',
        b'a'..=b'z' => byte - b'a',
        _ => 0xff,
    }
}

/// The byte the pair spells, if it is a syllable.
fn syllable_value(first: char, second: char) -> Option<u8> {
    let (first, second) = (u8::try_from(first).ok()?, u8::try_from(second).ok()?);
    let (first, second) = (letter(first), letter(second));
    if first == 0xff || second == 0xff {
        return None;
    }
    u8::try_from(SYLLABLE_VALUES[usize::from(first) * 26 + usize::from(second)]).ok()
}

/// Decodes `text` into its bytes (unmasked in place) and its id.
fn decode_into(text: &str, bytes: &mut [u8; MAX_SYLLABLES]) -> Result<Decoded, ELinkError> {
    if text.len() > ELink::MAX_LEN {
        let found = text.chars().count();
        if found > ELink::MAX_LEN {
            return Err(ELinkError::TooLong { found });
        }
    }
    let mut count = 0;
    let mut pending: Option<(usize, char)> = None;
    for (index, c) in text.char_indices() {
        if c == '-' || c == ' ' {
            continue;
        }
        match pending.take() {
            None => pending = Some((index, c)),
            Some((first_index, first)) => {
                let Some(value) = syllable_value(first, c) else {
                    return Err(ELinkError::UnknownSyllable {
                        first,
                        second: c,
                        index: first_index,
                    });
                };
                // At most 1024 characters make at most 512 syllables.
                let Some(slot) = bytes.get_mut(count) else {
                    return Err(ELinkError::TooLong {
                        found: text.chars().count(),
                    });
                };
                *slot = value;
                count += 1;
            }
        }
    }
    if let Some((index, character)) = pending {
        return Err(ELinkError::OddLetters { character, index });
    }
    if count == 0 {
        return Err(ELinkError::Empty);
    }
    if count < 4 {
        return Err(ELinkError::TooShort {
            expected: 4,
            found: count,
        });
    }
    let bytes = &mut bytes[..count];
    let seed = bytes[0] >> 4;
    let authority = bytes[0] & 0x0f;
    let mask = mask(seed);
    for byte in &mut bytes[1..] {
        *byte ^= mask;
    }
    let (era_len, id_len) = (bytes[1] >> 4, bytes[1] & 0x0f);
    if era_len > 4 || id_len == 0 || id_len > 8 {
        return Err(ELinkError::SegmentLength { era_len, id_len });
    }
    let (era_len, id_len) = (usize::from(era_len), usize::from(id_len));
    let metadata_start = 3 + era_len + id_len;
    if count < metadata_start {
        return Err(ELinkError::TooShort {
            expected: metadata_start,
            found: count,
        });
    }
    let mut era_bytes = [0u8; 4];
    era_bytes[..era_len].copy_from_slice(&bytes[3..3 + era_len]);
    let mut id_bytes = [0u8; 8];
    id_bytes[..id_len].copy_from_slice(&bytes[3 + era_len..metadata_start]);
    let era = u32::from_le_bytes(era_bytes);
    // As Azos: the authority of the header is ORed in (8 id bytes already carry it).
    let id64 = u64::from_le_bytes(id_bytes) | (u64::from(authority) << Gdid::COUNTER_BITS);
    let computed = checksum(era, id64, count - metadata_start);
    if bytes[2] != computed {
        return Err(ELinkError::Checksum {
            found: bytes[2],
            computed,
        });
    }
    let id = Gdid::from_raw(era, id64);
    // A link without dashes may be too long once spelled canonically: refuse it, so that every
    // ELink value encodes within MAX_LEN.
    let max = max_metadata_len(id);
    if count - metadata_start > max {
        return Err(ELinkError::MetadataTooLong {
            length: count - metadata_start,
            max,
        });
    }
    Ok(Decoded {
        id,
        metadata_start,
        end: count,
    })
}

impl fmt::Display for ELink {
    /// The link spelled with seed 0: deterministic. Use [`ELink::encode`] to choose the seed.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.pad(&self.encode(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gdid::COUNTER_MAX;
    use crate::gdid::tests::fixtures;

    #[test]
    fn the_alphabet_has_256_distinct_upper_case_syllables() {
        let mut seen = std::collections::HashSet::new();
        for value in 0..=255u8 {
            let pair = syllable(value);
            assert!(pair.iter().all(u8::is_ascii_uppercase), "{pair:?}");
            assert!(seen.insert(pair), "{pair:?} twice");
            assert_eq!(
                syllable_value(char::from(pair[0]), char::from(pair[1])),
                Some(value)
            );
            let lower = pair.map(|b| char::from(b.to_ascii_lowercase()));
            assert_eq!(syllable_value(lower[0], lower[1]), Some(value));
        }
        let unused = SYLLABLE_VALUES
            .iter()
            .filter(|&&v| v == NOT_A_SYLLABLE)
            .count();
        assert_eq!(unused, 26 * 26 - 256);
    }

    #[test]
    fn the_alphabet_starts_and_ends_as_azos_does() {
        assert_eq!(&ALPHABET[..8], b"ABACAUAK");
        assert_eq!(&ALPHABET[504..], b"YAYEYOXA");
        // "AIAIIW-IW" is 123 spelled with seed 1 (mask 0x11).
        assert_eq!(syllable(123 ^ 0x11), *b"IW");
    }

    #[test]
    fn the_checksum_matches_a_128_bit_reference() {
        for id in fixtures() {
            for len in [0usize, 1, 5, 495] {
                let era = u128::from(id.era()) * u128::from(ERA_FACTOR) % (1 << 32);
                let sum = era ^ u128::from(id.id64()) ^ (len as u128 * 0xee77);
                let expected = u8::try_from(sum % 251).unwrap();
                assert_eq!(checksum(id.era(), id.id64(), len), expected);
            }
        }
    }

    #[test]
    fn every_fixture_round_trips_with_every_seed_and_has_the_computed_length() {
        for id in fixtures() {
            for seed in 0..16 {
                let text = id.to_elink(seed);
                assert_eq!(text.len(), ELink::new(id).encoded_len(), "{id} {text}");
                assert_eq!(Gdid::from_elink(&text), Ok(id), "{id} seed {seed}: {text}");
                assert_eq!(ELink::decode(&text.to_lowercase()), Ok(ELink::new(id)));
            }
        }
    }

    #[test]
    fn the_longest_link_fills_the_buffer() {
        let id = Gdid::from_parts(u32::MAX, 15, COUNTER_MAX).unwrap();
        assert_eq!(id.to_elink(3).len(), Gdid::ELINK_MAX_LEN);
    }

    #[test]
    fn metadata_limits_are_those_of_1024_characters() {
        let small = Gdid::ZERO;
        assert_eq!(max_metadata_len(small), 507);
        let link = ELink::with_metadata(small, vec![0xab; 507]).unwrap();
        assert_eq!(link.encoded_len(), 9 + 1 + 2 * 507);
        assert!(link.encoded_len() <= ELink::MAX_LEN);
        assert_eq!(ELink::decode(&link.encode(9)), Ok(link));
        assert_eq!(max_metadata_len(Gdid::MAX), 495);
    }
}
