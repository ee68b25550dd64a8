//! `gdid convert`: ids from one form to another, from the command line or one a line from stdin.

use std::io::{self, BufRead, Write};

use gdid::Form;

use crate::form::{self, BadValue, InputForm};

/// What a conversion run did.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Converted {
    /// Values converted and written.
    pub written: u64,
    /// Values refused (each reported on stderr).
    pub refused: u64,
}

/// Converts each value, writing one line to `out` per good value and one line to `errors` per bad
/// one (with its line number when read from a stream); goes on after a bad value.
pub(crate) fn convert(
    values: impl IntoIterator<Item = io::Result<String>>,
    from: InputForm,
    to: Form,
    out: &mut impl Write,
    errors: &mut impl Write,
) -> io::Result<Converted> {
    let mut done = Converted::default();
    for (line, value) in (1..).zip(values) {
        let value = value?;
        if value.trim().is_empty() {
            continue;
        }
        match form::read(from, &value) {
            Ok(id) => {
                writeln!(out, "{}", to.write(id))?;
                done.written += 1;
            }
            Err(BadValue {
                form,
                input,
                reason,
            }) => {
                writeln!(
                    errors,
                    "gdid: line {line}: invalid {form} value {input:?}: {reason}"
                )?;
                done.refused += 1;
            }
        }
    }
    out.flush()?;
    Ok(done)
}

/// The values of the command line, or else stdin's lines.
pub(crate) fn values(arguments: Vec<String>) -> Box<dyn Iterator<Item = io::Result<String>>> {
    if arguments.is_empty() {
        Box::new(io::stdin().lock().lines())
    } else {
        Box::new(arguments.into_iter().map(Ok))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn converts_the_good_values_and_reports_each_bad_one_with_its_line() {
        let input = ["1293:3:57", "", "1:18:3", "0:1:75"].map(|v| Ok(v.to_owned()));
        let (mut out, mut errors) = (Vec::new(), Vec::new());
        let done = convert(
            input,
            InputForm::Form(Form::Text),
            Form::Compact,
            &mut out,
            &mut errors,
        );
        assert_eq!(
            done.unwrap(),
            Converted {
                written: 2,
                refused: 1
            }
        );
        assert_eq!(String::from_utf8(out).unwrap(), "8d0a9307\n00b109\n");
        assert_eq!(
            String::from_utf8(errors).unwrap(),
            "gdid: line 3: invalid text value \"1:18:3\": the authority segment at byte 2 is out of range: the maximum is 15\n"
        );
    }
}
