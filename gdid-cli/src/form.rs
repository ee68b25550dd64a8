//! The forms a GDID is written in (`--to`, `--form`) and read from (`--from`): gdid's one list
//! ([`Form`]), with `auto` for reading; and the output format of the commands that have a
//! machine-readable one (`--format`): one set of names for every command.

use std::ffi::OsStr;
use std::fmt;
use std::marker::PhantomData;

use clap::ValueEnum;
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use gdid::{Form, Gdid};

/// How a command prints what it found: for people, or for programs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// Text for people.
    #[default]
    Text,
    /// JSON for programs.
    Json,
}

/// The form a value on the command line is read in: one of gdid's forms, or any self-describing
/// text form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InputForm {
    /// In this form.
    Form(Form),
    /// Any self-describing text form: `era:authority:counter`, 24 hex digits or an ELink.
    Auto,
}

impl fmt::Display for InputForm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputForm::Form(form) => form.fmt(f),
            InputForm::Auto => f.write_str("auto"),
        }
    }
}

/// Values a flag takes by name, each with a line of help.
pub(crate) trait Named: Copy + Send + Sync + 'static {
    /// Every value: its name, its help, the value.
    fn named() -> Vec<(&'static str, &'static str, Self)>;
}

impl Named for Form {
    fn named() -> Vec<(&'static str, &'static str, Form)> {
        Form::ALL
            .into_iter()
            .map(|form| (form.name(), form.description(), form))
            .collect()
    }
}

impl Named for InputForm {
    fn named() -> Vec<(&'static str, &'static str, InputForm)> {
        let mut named: Vec<_> = Form::ALL
            .into_iter()
            .map(|form| (form.name(), form.description(), InputForm::Form(form)))
            .collect();
        named.push((
            "auto",
            "Any self-describing text form: `era:authority:counter`, 24 hex digits or an ELink",
            InputForm::Auto,
        ));
        named
    }
}

/// Reads a flag's value by its name (clap's list of possible values, and its message for a
/// name that is none of them).
#[derive(Debug, Clone, Copy)]
pub(crate) struct ByName<T>(PhantomData<T>);

impl<T: Named> ByName<T> {
    /// The parser of `T`'s names.
    pub(crate) const fn new() -> Self {
        ByName(PhantomData)
    }

    fn possible() -> Vec<PossibleValue> {
        T::named()
            .into_iter()
            .map(|(name, help, _)| PossibleValue::new(name).help(help))
            .collect()
    }
}

impl<T: Named> TypedValueParser for ByName<T> {
    type Value = T;

    fn parse_ref(
        &self,
        command: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &OsStr,
    ) -> Result<T, clap::Error> {
        let name = PossibleValuesParser::new(Self::possible()).parse_ref(command, arg, value)?;
        T::named()
            .into_iter()
            .find_map(|(known, _, value)| (known == name).then_some(value))
            .ok_or_else(|| clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(command))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(Self::possible().into_iter()))
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
    let read = match form {
        InputForm::Form(form) => form.read(input).map_err(|e| e.to_string()),
        InputForm::Auto => Gdid::parse_any(input).map_err(|e| e.to_string()),
    };
    read.map_err(|reason| BadValue {
        form,
        input: input.to_owned(),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_reads_every_self_describing_form() {
        let id: Gdid = "1293:3:57".parse().unwrap();
        for any in ["1293:3:57", "0x0000050d3000000000000039", "akcugo aqasew"] {
            assert_eq!(read(InputForm::Auto, any).unwrap(), id, "{any}");
        }
        for form in [Form::Text, Form::Hex, Form::Elink] {
            assert_eq!(read(InputForm::Auto, &form.write(id)).unwrap(), id);
        }
    }

    #[test]
    fn says_what_is_wrong_with_the_value() {
        for (form, input, message) in [
            (
                InputForm::Form(Form::Text),
                "1:18:3",
                "invalid text value \"1:18:3\": the authority segment at byte 2 is out of range: the maximum is 15",
            ),
            (
                InputForm::Form(Form::Hex),
                "0102",
                "invalid hex value \"0102\": expected 12 bytes, found 2",
            ),
            (
                InputForm::Form(Form::Leb),
                "057b00",
                "invalid leb value \"057b00\": 1 bytes follow the encoding that ends at byte 2",
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

    #[test]
    fn every_name_is_read_back_as_its_value() {
        let command = clap::Command::new("gdid");
        for (name, _, value) in InputForm::named() {
            let parsed = ByName::<InputForm>::new()
                .parse_ref(&command, None, OsStr::new(name))
                .unwrap();
            assert_eq!(parsed, value);
        }
        let refused = ByName::<Form>::new().parse_ref(&command, None, OsStr::new("auto"));
        assert!(refused.is_err(), "auto is a form to read in, not to write");
    }
}
