//! Ids viewed in place (feature `zerocopy`): a `&[u8]` of 12-byte ids, as a file, a column
//! buffer or a message holds them, read as a `&[Gdid]` without copying, and the reverse.
//!
//! A `Gdid` is 12 bytes aligned to 4 (moving one is then an 8-byte and a 4-byte access), so
//! only bytes that start at a multiple of 4 can be viewed in place: [`view`] says
//! [`ViewError::Unaligned`] for others, and [`view_or_copy`] copies them instead (one
//! `memcpy`). A length that is not a multiple of 12 is [`ViewError::Length`] for both.
//!
//! ```
//! use gdid_core::{Gdid, zerocopy};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let ids = [Gdid::from_parts(1, 2, 3)?, Gdid::from_parts(1, 2, 4)?];
//! let bytes: &[u8] = zerocopy::bytes_of(&ids); // the 24 bytes, in place
//! assert_eq!(bytes[..Gdid::SIZE], ids[0].to_bytes());
//!
//! // `bytes` starts where `ids` does, at a multiple of 4: viewed, not copied.
//! assert_eq!(zerocopy::view(bytes)?, &ids);
//!
//! // One byte further on, the same ids are not aligned: an error, or a copy.
//! let mut shifted = vec![0u8; 1 + bytes.len()];
//! shifted[1..].copy_from_slice(bytes);
//! let unaligned = &shifted[1..];
//! if unaligned.as_ptr().align_offset(4) != 0 {
//!     assert_eq!(zerocopy::view(unaligned), Err(zerocopy::ViewError::Unaligned));
//! }
//! assert_eq!(*zerocopy::view_or_copy(unaligned)?, ids);
//!
//! assert_eq!(zerocopy::view(&bytes[..13]), Err(zerocopy::ViewError::Length { len: 13 }));
//! # Ok(())
//! # }
//! ```
//!
//! zerocopy's own traits are implemented too (`FromBytes`, `IntoBytes`, `KnownLayout`,
//! `Immutable`), for its whole API: `Gdid::read_from_bytes`, `<[Gdid]>::ref_from_prefix`,
//! `Ref`, and structs of your own that hold ids.

use alloc::borrow::Cow;
use alloc::vec;

use zerocopy::{FromBytes, IntoBytes};

use crate::Gdid;

/// Why bytes cannot be viewed as ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// The length is not a multiple of 12.
    #[error("{len} bytes are not a whole number of 12-byte ids")]
    Length {
        /// The length given.
        len: usize,
    },
    /// The bytes do not start at a multiple of 4, a `Gdid`'s alignment: [`view_or_copy`]
    /// copies them.
    #[error(
        "the bytes do not start at a multiple of 4 (a Gdid's alignment): view_or_copy copies them"
    )]
    Unaligned,
}

/// The ids in `bytes`, in place: 12 bytes each, big-endian (the form of
/// [`Gdid::to_bytes`]).
///
/// # Errors
///
/// [`ViewError::Length`] when `bytes.len()` is not a multiple of 12, and
/// [`ViewError::Unaligned`] when `bytes` does not start at a multiple of 4.
pub fn view(bytes: &[u8]) -> Result<&[Gdid], ViewError> {
    check_length(bytes)?;
    if bytes.is_empty() {
        return Ok(&[]); // no id to align, wherever the empty slice points
    }
    <[Gdid]>::ref_from_bytes(bytes).map_err(|_| ViewError::Unaligned)
}

/// The ids in `bytes`: in place when they start at a multiple of 4, copied otherwise.
///
/// # Errors
///
/// [`ViewError::Length`] when `bytes.len()` is not a multiple of 12.
pub fn view_or_copy(bytes: &[u8]) -> Result<Cow<'_, [Gdid]>, ViewError> {
    if let Ok(ids) = view(bytes) {
        return Ok(Cow::Borrowed(ids));
    }
    check_length(bytes)?;
    let mut ids = vec![Gdid::ZERO; bytes.len() / Gdid::SIZE];
    ids.as_mut_bytes().copy_from_slice(bytes);
    Ok(Cow::Owned(ids))
}

/// The 12 bytes of each id in `ids`, in place.
pub fn bytes_of(ids: &[Gdid]) -> &[u8] {
    ids.as_bytes()
}

fn check_length(bytes: &[u8]) -> Result<(), ViewError> {
    if bytes.len() % Gdid::SIZE == 0 {
        Ok(())
    } else {
        Err(ViewError::Length { len: bytes.len() })
    }
}
