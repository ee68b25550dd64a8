//! [`Form`]: the text forms a GDID is written in and read from, by name: the one list the `gdid`
//! command (`--form`, `--from`, `--to`), `gdid serve` (the `form` of `POST /v1/ids`) and the
//! PostgreSQL extension (`gdid_form`) share.

use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use core::str::FromStr;

use crate::{DecodeError, ELinkError, Gdid, InvalidLength, ParseError};

/// A text form of a GDID.
///
/// ```
/// use gdid_core::{Form, Gdid};
///
/// let id: Gdid = "1293:3:57".parse()?;
/// for form in Form::ALL {
///     assert_eq!(form.read(&form.write(id))?, id, "{form}");
/// }
/// assert_eq!(Form::Compact.write(id), "8d0a9307");
/// assert_eq!("elink".parse::<Form>()?, Form::Elink);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "lowercase")
)]
pub enum Form {
    /// `era:authority:counter` (`1293:3:57`), as `Display` writes it; 24 hex digits are read
    /// too, as `FromStr` reads them.
    #[default]
    Text,
    /// The 12 big-endian bytes as 24 lowercase hex digits (read in either case, optionally
    /// after `0x`).
    Hex,
    /// The `leb` encoding (LEB128 era, LEB128 id64: [`Gdid::encode_leb`]) as hex digits.
    Leb,
    /// The `compact` encoding (LEB128 era, LEB128 counter<<4|authority:
    /// [`Gdid::encode_compact`]) as hex digits.
    Compact,
    /// The NFX/Azos ELink, written with [`Form::ELINK_SEED`] so that an id always shows the
    /// same link (read with any seed; case, `-` and spaces ignored).
    Elink,
}

impl Form {
    /// Every form, in the order lists show them.
    pub const ALL: [Form; 5] = [Form::Text, Form::Hex, Form::Leb, Form::Compact, Form::Elink];

    /// The seed an ELink is written with: fixed, so that the same id always gives the same link
    /// (an ELink reads the same whatever its seed).
    pub const ELINK_SEED: u8 = 0;

    /// Its name: `text`, `hex`, `leb`, `compact` or `elink`.
    pub const fn name(self) -> &'static str {
        match self {
            Form::Text => "text",
            Form::Hex => "hex",
            Form::Leb => "leb",
            Form::Compact => "compact",
            Form::Elink => "elink",
        }
    }

    /// What it is, in a line (for a command's help).
    pub const fn description(self) -> &'static str {
        match self {
            Form::Text => "`era:authority:counter` (24 hex digits are read too)",
            Form::Hex => {
                "The 12 bytes as 24 lowercase hex digits (read in either case, optionally after \
                 `0x`)"
            }
            Form::Leb => "The `leb` encoding (LEB128 era, LEB128 id64), as hex digits",
            Form::Compact => {
                "The `compact` encoding (LEB128 era, LEB128 counter<<4|authority), as hex digits"
            }
            Form::Elink => {
                "The ELink (NFX/Azos), written with seed 0 so that an id always shows the same \
                 link (read with any seed; case, `-` and spaces ignored)"
            }
        }
    }

    /// The longest id written in this form, in bytes.
    pub const fn longest(self) -> usize {
        match self {
            Form::Text => Gdid::TEXT_MAX_LEN,
            Form::Hex => Gdid::HEX_LEN,
            Form::Leb | Form::Compact => 2 * Gdid::VARINT_MAX_LEN,
            Form::Elink => Gdid::ELINK_MAX_LEN,
        }
    }

    /// `id` written in this form, as [`Form::read`] reads it back.
    pub fn write(self, id: Gdid) -> String {
        match self {
            Form::Text => id.encode_text(&mut [0; Gdid::TEXT_MAX_LEN]).into(),
            Form::Hex => id.encode_hex_lower(&mut [0; Gdid::HEX_LEN]).into(),
            Form::Elink => id.to_elink(Form::ELINK_SEED),
            Form::Leb | Form::Compact => {
                let mut bytes = Vec::with_capacity(Gdid::VARINT_MAX_LEN);
                if self == Form::Leb {
                    id.encode_leb(&mut bytes);
                } else {
                    id.encode_compact(&mut bytes);
                }
                hex::encode(bytes)
            }
        }
    }

    /// Reads `text` as a GDID written in this form (white space around it ignored).
    ///
    /// # Errors
    ///
    /// [`ReadError`], saying what is wrong and where.
    pub fn read(self, text: &str) -> Result<Gdid, ReadError> {
        match self {
            Form::Text => Ok(text.parse()?),
            Form::Elink => Ok(Gdid::from_elink(text.trim())?),
            Form::Hex => {
                let mut bytes = [0; Gdid::SIZE];
                let digits = hex_digits(text)?;
                if digits.len() != 2 * Gdid::SIZE {
                    return Err(ReadError::Length(InvalidLength {
                        expected: Gdid::SIZE,
                        found: digits.len() / 2,
                    }));
                }
                hex::decode_to_slice(digits, &mut bytes).map_err(ReadError::HexDigits)?;
                Ok(Gdid::from_bytes(bytes))
            }
            Form::Leb | Form::Compact => {
                let digits = hex_digits(text)?;
                let mut buf = [0; Gdid::VARINT_MAX_LEN];
                let bytes =
                    buf.get_mut(..digits.len() / 2)
                        .ok_or(ReadError::Length(InvalidLength {
                            expected: Gdid::VARINT_MAX_LEN,
                            found: digits.len() / 2,
                        }))?;
                hex::decode_to_slice(digits, bytes).map_err(ReadError::HexDigits)?;
                let (id, used) = if self == Form::Leb {
                    Gdid::decode_leb(bytes)?
                } else {
                    Gdid::decode_compact(bytes)?
                };
                if used != bytes.len() {
                    return Err(ReadError::Trailing {
                        used,
                        trailing: bytes.len() - used,
                    });
                }
                Ok(id)
            }
        }
    }
}

/// The hex digits of `text`: white space around it and a `0x` before them left out.
fn hex_digits(text: &str) -> Result<&str, ReadError> {
    let digits = text.trim();
    let digits = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
        .unwrap_or(digits);
    if digits.is_empty() {
        return Err(ReadError::NoDigits);
    }
    Ok(digits)
}

impl fmt::Display for Form {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Form {
    type Err = UnknownForm;

    /// A form by its [name](Form::name), in any case.
    fn from_str(name: &str) -> Result<Form, UnknownForm> {
        Form::ALL
            .into_iter()
            .find(|form| form.name().eq_ignore_ascii_case(name.trim()))
            .ok_or(UnknownForm)
    }
}

/// A name that is no [`Form`]'s.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("no such form: expected text, hex, leb, compact or elink")]
pub struct UnknownForm;

/// Text that is not a GDID in the [`Form`] it was read in.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Not the colon text (nor 24 hex digits).
    #[error(transparent)]
    Text(#[from] ParseError),
    /// Not an ELink.
    #[error(transparent)]
    ELink(#[from] ELinkError),
    /// Hex digits of more or fewer bytes than the form takes (`leb` and `compact`: at most
    /// [`Gdid::VARINT_MAX_LEN`]).
    #[error(transparent)]
    Length(#[from] InvalidLength),
    /// No hex digits at all.
    #[error("expected hex digits, found none")]
    NoDigits,
    /// Something else than hex digits, or an odd number of them.
    #[error("expected hex digits: {0}")]
    HexDigits(hex::FromHexError),
    /// Bytes that are no `leb` or `compact` encoding.
    #[error(transparent)]
    Decode(#[from] DecodeError),
    /// Bytes after the encoding's end.
    #[error("{trailing} bytes follow the encoding that ends at byte {used}")]
    Trailing {
        /// The bytes the encoding takes.
        used: usize,
        /// The bytes after them.
        trailing: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::string::ToString;

    #[test]
    fn reads_every_form_of_the_same_id() {
        let id: Gdid = "1293:3:57".parse().unwrap();
        assert_eq!(Form::Text.read("1293:3:57").unwrap(), id);
        assert_eq!(Form::Text.read("0000050d3000000000000039").unwrap(), id);
        assert_eq!(Form::Hex.read("0x0000050D3000000000000039").unwrap(), id);
        assert_eq!(Form::Compact.read("8d0a9307").unwrap(), id);
        let zero_authority: Gdid = "5:0:123".parse().unwrap();
        assert_eq!(Form::Leb.read("057b").unwrap(), zero_authority);
        assert_eq!(Form::Elink.read(" AKCUGO-AQASEW ").unwrap(), id);
        assert!(Form::Text.read("AKCUGO-AQASEW").is_err());
    }

    #[test]
    fn every_form_written_reads_back_and_fits_its_longest() {
        let ids = [
            Gdid::ZERO,
            "1293:3:57".parse().unwrap(),
            Gdid::from_parts(u32::MAX, 15, crate::COUNTER_MAX).unwrap(),
        ];
        for form in Form::ALL {
            for id in ids {
                let written = form.write(id);
                assert!(written.len() <= form.longest(), "{form} {written}");
                assert_eq!(form.read(&written).unwrap(), id, "{form}");
            }
            assert_eq!(form.name().parse::<Form>(), Ok(form));
            assert_eq!(form.name().to_uppercase().parse::<Form>(), Ok(form));
        }
        assert_eq!("base64".parse::<Form>(), Err(UnknownForm));
    }

    #[test]
    fn the_refusal_of_an_unknown_name_lists_every_form() {
        let names: alloc::vec::Vec<&str> = Form::ALL.iter().map(|form| form.name()).collect();
        let (last, rest) = names.split_last().unwrap();
        let listed = alloc::format!("{} or {last}", rest.join(", "));
        assert_eq!(
            UnknownForm.to_string(),
            alloc::format!("no such form: expected {listed}")
        );
    }

    #[test]
    fn says_what_is_wrong_with_the_text() {
        for (form, input, message) in [
            (
                Form::Text,
                "1:18:3",
                "the authority segment at byte 2 is out of range: the maximum is 15",
            ),
            (Form::Hex, "0102", "expected 12 bytes, found 2"),
            (
                Form::Leb,
                "057b00",
                "1 bytes follow the encoding that ends at byte 2",
            ),
            (
                Form::Compact,
                "zz",
                "expected hex digits: Invalid character 'z' at position 0",
            ),
            (Form::Leb, "", "expected hex digits, found none"),
            (
                Form::Leb,
                "0".repeat(40).as_str(),
                "expected 15 bytes, found 20",
            ),
            (
                Form::Compact,
                "8d0",
                "expected hex digits: Odd number of digits",
            ),
            (
                Form::Elink,
                "TUSHEK-TOTV",
                "ELink checksum mismatch: the link says 242, its content sums to 136",
            ),
        ] {
            assert_eq!(
                form.read(input).unwrap_err().to_string(),
                message,
                "{input}"
            );
        }
    }
}
