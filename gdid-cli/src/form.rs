//! The forms a GDID is written in (`--to`, `--form`) and read from (`--from`), and the output
//! format of the commands that have a machine-readable one (`--format`): one set of names for
//! every command.

use std::fmt;

use clap::ValueEnum;
use gdid::Gdid;

/// How a command prints what it found: for people, or for programs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Text for people.
    #[default]
    Text,
    /// JSON for programs.
    Json,
}

/// The forms a value on the command line can be given in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum InputForm {
    /// `era:authority:counter` (24 hex digits are read too).
    Text,
    /// The 12 bytes as 24 hex digits (optionally after `0x`).
    Hex,
    /// The `leb` form (LEB128 era, LEB128 id64), as hex digits.
    Leb,
    /// The `compact` form (LEB128 era, LEB128 counter<<4|authority), as hex digits.
    Compact,
    /// An ELink (NFX/Azos): two-letter syllables; case, `-` and spaces ignored.
    Elink,
    /// Any self-describing text form: `era:authority:counter`, 24 hex digits or an ELink.
    Auto,
}

impl fmt::Display for InputForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            InputForm::Text => "text",
            InputForm::Hex => "hex",
            InputForm::Leb => "leb",
            InputForm::Compact => "compact",
            InputForm::Elink => "elink",
            InputForm::Auto => "auto",
        })
    }
}

/// The forms an id can be written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputForm {
    /// `era:authority:counter`.
    Text,
    /// The 12 bytes as 24 lowercase hex digits.
    Hex,
    /// The `leb` form, as hex digits.
    Leb,
    /// The `compact` form, as hex digits.
    Compact,
    /// The ELink (NFX/Azos), spelled with seed 0 so that the output is reproducible.
    Elink,
}

/// The name of `form` on the command line.
pub(crate) fn name(form: OutputForm) -> String {
    form.to_possible_value()
        .map_or_else(String::new, |v| v.get_name().to_owned())
}

/// The seed `gdid` spells ELinks with: fixed, so that the same id always prints the same link.
pub(crate) const ELINK_SEED: u8 = 0;

/// `id` in `form`, as `read` reads it back.
pub(crate) fn write(form: OutputForm, id: Gdid) -> String {
    match form {
        OutputForm::Text => id.to_string(),
        OutputForm::Hex => format!("{id:x}"),
        OutputForm::Elink => id.to_elink(ELINK_SEED),
        OutputForm::Leb | OutputForm::Compact => {
            let mut bytes = Vec::with_capacity(Gdid::VARINT_MAX_LEN);
            if form == OutputForm::Leb {
                id.encode_leb(&mut bytes);
            } else {
                id.encode_compact(&mut bytes);
            }
            hex::encode(bytes)
        }
    }
}

/// A value that is not a GDID in the form it was said to be in.
#[derive(Debug, thiserror::Error)]
#[error("invalid {form} value {input:?}: {reason}")]
pub(crate) struct BadValue {
    /// The form the value was read as.
    pub form: InputForm,
    /// The value as given.
    pub input: String,
    /// Why it is not a GDID.
    pub reason: String,
}

/// Reads `input` as a GDID in `form`.
pub(crate) fn read(form: InputForm, input: &str) -> Result<Gdid, BadValue> {
    let bad = |reason: String| BadValue {
        form,
        input: input.to_owned(),
        reason,
    };
    match form {
        InputForm::Text => input.parse().map_err(|e| bad(format!("{e}"))),
        InputForm::Elink => Gdid::from_elink(input.trim()).map_err(|e| bad(e.to_string())),
        InputForm::Auto => Gdid::parse_any(input).map_err(|e| bad(e.to_string())),
        InputForm::Hex => {
            let bytes = hex_bytes(input).map_err(bad)?;
            Gdid::from_slice(&bytes).map_err(|e| bad(e.to_string()))
        }
        InputForm::Leb | InputForm::Compact => {
            let bytes = hex_bytes(input).map_err(bad)?;
            let decoded = if form == InputForm::Leb {
                Gdid::decode_leb(&bytes)
            } else {
                Gdid::decode_compact(&bytes)
            };
            let (id, used) = decoded.map_err(|e| bad(e.to_string()))?;
            if used != bytes.len() {
                return Err(bad(format!(
                    "{} bytes follow the encoding that ends at byte {used}",
                    bytes.len() - used
                )));
            }
            Ok(id)
        }
    }
}

/// Decodes hex digits (optionally after `0x`, surrounding whitespace ignored) into bytes.
fn hex_bytes(input: &str) -> Result<Vec<u8>, String> {
    let digits = input.trim();
    let digits = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
        .unwrap_or(digits);
    if digits.is_empty() {
        return Err("expected hex digits, found none".into());
    }
    hex::decode(digits).map_err(|e| format!("expected hex digits: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_every_form_of_the_same_id() {
        let id: Gdid = "1293:3:57".parse().unwrap();
        assert_eq!(read(InputForm::Text, "1293:3:57").unwrap(), id);
        assert_eq!(
            read(InputForm::Text, "0000050d3000000000000039").unwrap(),
            id
        );
        assert_eq!(
            read(InputForm::Hex, "0x0000050D3000000000000039").unwrap(),
            id
        );
        assert_eq!(read(InputForm::Compact, "8d0a9307").unwrap(), id);
        let zero_authority: Gdid = "5:0:123".parse().unwrap();
        assert_eq!(read(InputForm::Leb, "057b").unwrap(), zero_authority);
        assert_eq!(read(InputForm::Elink, " AKCUGO-AQASEW ").unwrap(), id);
        for any in ["1293:3:57", "0x0000050d3000000000000039", "akcugo aqasew"] {
            assert_eq!(read(InputForm::Auto, any).unwrap(), id, "{any}");
        }
        assert!(read(InputForm::Text, "AKCUGO-AQASEW").is_err());
    }

    #[test]
    fn every_form_written_reads_back() {
        let id: Gdid = "1293:3:57".parse().unwrap();
        for (output, input) in [
            (OutputForm::Text, InputForm::Text),
            (OutputForm::Hex, InputForm::Text),
            (OutputForm::Hex, InputForm::Hex),
            (OutputForm::Leb, InputForm::Leb),
            (OutputForm::Compact, InputForm::Compact),
            (OutputForm::Elink, InputForm::Elink),
            (OutputForm::Elink, InputForm::Auto),
            (OutputForm::Text, InputForm::Auto),
            (OutputForm::Hex, InputForm::Auto),
        ] {
            assert_eq!(read(input, &write(output, id)).unwrap(), id, "{output:?}");
        }
        assert_eq!(write(OutputForm::Compact, id), "8d0a9307");
    }

    #[test]
    fn says_what_is_wrong_with_the_value() {
        for (form, input, message) in [
            (
                InputForm::Text,
                "1:18:3",
                "invalid text value \"1:18:3\": the authority segment at byte 2 is out of range: the maximum is 15",
            ),
            (
                InputForm::Hex,
                "0102",
                "invalid hex value \"0102\": expected 12 bytes, found 2",
            ),
            (
                InputForm::Leb,
                "057b00",
                "invalid leb value \"057b00\": 1 bytes follow the encoding that ends at byte 2",
            ),
            (
                InputForm::Compact,
                "zz",
                "invalid compact value \"zz\": expected hex digits: Invalid character 'z' at position 0",
            ),
            (
                InputForm::Leb,
                "",
                "invalid leb value \"\": expected hex digits, found none",
            ),
            (
                InputForm::Elink,
                "TUSHEK-TOTV",
                "invalid elink value \"TUSHEK-TOTV\": ELink checksum mismatch: the link says 242, its content sums to 136",
            ),
            (
                InputForm::Auto,
                "1:18:3",
                "invalid auto value \"1:18:3\": the authority segment at byte 2 is out of range: the maximum is 15",
            ),
        ] {
            assert_eq!(read(form, input).unwrap_err().to_string(), message);
        }
    }
}
