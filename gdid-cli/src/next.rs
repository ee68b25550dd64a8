//! `gdid next`: issue ids and print them, one a line, each batch flushed as soon as it is issued.

use std::io::{self, Write};

use gdid::Form;
use serde_json::json;

use crate::failure::Failure;
use crate::form::Format;
use crate::inspect::Inspection;
use crate::issuer::{Issued, Issuer, Strategy};

/// Ids taken from the generator per write: every id printed was issued before it was printed, so
/// a process killed midway has printed only ids it really issued.
const BATCH: u64 = 1_000;

/// How `gdid next` prints each id: `--form` for one id a line, or one JSON object a line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Printed {
    /// Each id in a form (`--form`, `--format text`).
    Form(Form),
    /// One JSON object a line (`--format json`): for GDIDs every field and form (as
    /// `gdid inspect --format json`), for other ids `{"id": …}`.
    Json,
}

/// A form the strategy's ids do not have.
#[derive(Debug, thiserror::Error)]
#[error("--form {form} is a form of GDIDs: --strategy {} issues other ids (text and hex are \
         every id's)", .strategy.name())]
pub(crate) struct NoSuchForm {
    /// The form asked for.
    pub form: String,
    /// The strategy.
    pub strategy: Strategy,
}

impl Printed {
    /// What `--form` and `--format` ask for.
    pub(crate) fn of(form: Form, format: Format) -> Self {
        match format {
            Format::Text => Printed::Form(form),
            Format::Json => Printed::Json,
        }
    }

    /// Checks, before anything is issued, that ids of `strategy` can be printed so.
    pub(crate) fn check(self, strategy: Strategy) -> Result<(), NoSuchForm> {
        match self {
            Printed::Form(form @ (Form::Leb | Form::Compact | Form::Elink))
                if strategy != Strategy::Gdid =>
            {
                Err(NoSuchForm {
                    form: form.name().to_owned(),
                    strategy,
                })
            }
            _ => Ok(()),
        }
    }

    /// Writes `id` and a newline.
    pub(crate) fn write(self, id: Issued, out: &mut impl Write) -> io::Result<()> {
        match (self, id) {
            (Printed::Form(form), Issued::Gdid(id)) => writeln!(out, "{}", form.write(id)),
            (Printed::Form(Form::Hex), Issued::Number(id)) => writeln!(out, "{id:016x}"),
            (Printed::Form(Form::Hex), Issued::Uuid(id)) => {
                writeln!(out, "{}", id.simple())
            }
            (Printed::Form(Form::Hex), Issued::ObjectId(id)) => {
                writeln!(out, "{}", id.to_hex())
            }
            // Text; the GDID forms are refused by `check` before anything is issued: the text
            // form, should one get here.
            (Printed::Form(_), id) => writeln!(out, "{id}"),
            (Printed::Json, Issued::Gdid(id)) => Inspection::of(id).write_json(out),
            (Printed::Json, Issued::Number(id)) => writeln!(out, "{}", json!({ "id": id })),
            (Printed::Json, id) => writeln!(out, "{}", json!({ "id": id.to_string() })),
        }
    }
}

/// Issues `count` ids from `issuer` and prints them to `out` as `printed` says.
pub(crate) async fn issue(
    issuer: &Issuer,
    count: u64,
    printed: Printed,
    out: &mut impl Write,
) -> Result<(), Failure> {
    let mut left = count;
    while left > 0 {
        let n = left.min(BATCH);
        for id in issuer.next_ids(n).await? {
            printed.write(id, out)?;
        }
        out.flush()?;
        left -= n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use gdid::Gdid;

    use super::*;

    fn line(printed: Printed, id: Issued) -> String {
        let mut out = Vec::new();
        printed.write(id, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn each_form_of_each_kind_of_id() {
        let (text, hex) = (Printed::Form(Form::Text), Printed::Form(Form::Hex));
        let gdid = Issued::Gdid(Gdid::from_parts(1293, 3, 57).unwrap());
        assert_eq!(line(text, gdid), "1293:3:57\n");
        assert_eq!(line(hex, gdid), "0000050d3000000000000039\n");
        assert_eq!(line(Printed::Form(Form::Compact), gdid), "8d0a9307\n");
        assert_eq!(
            line(Printed::Form(Form::Leb), gdid),
            "8d0ab98080808080808030\n"
        );
        assert_eq!(line(Printed::Form(Form::Elink), gdid), "AKCUGO-AQASEW\n");
        assert!(
            line(Printed::Json, gdid).starts_with(r#"{"era":1293,"authority":3,"counter":57,"#)
        );
        let number = Issued::Number(255);
        assert_eq!(line(text, number), "255\n");
        assert_eq!(line(hex, number), "00000000000000ff\n");
        assert_eq!(line(Printed::Json, number), "{\"id\":255}\n");
        let uuid = Issued::Uuid(gdid::uuid::Uuid::from_u128(
            0xa1a2a3a4b1b2c1c2d1d2d3d4d5d6d7d8,
        ));
        assert_eq!(line(text, uuid), "a1a2a3a4-b1b2-c1c2-d1d2-d3d4d5d6d7d8\n");
        assert_eq!(line(hex, uuid), "a1a2a3a4b1b2c1c2d1d2d3d4d5d6d7d8\n");
        assert_eq!(
            line(Printed::Json, uuid),
            "{\"id\":\"a1a2a3a4-b1b2-c1c2-d1d2-d3d4d5d6d7d8\"}\n"
        );
        for gdid_only in [Form::Leb, Form::Compact, Form::Elink] {
            assert!(Printed::Form(gdid_only).check(Strategy::UuidV7).is_err());
            assert!(Printed::Form(gdid_only).check(Strategy::Gdid).is_ok());
        }
        for every in [text, hex, Printed::Json] {
            assert!(every.check(Strategy::Sharded).is_ok());
        }
    }
}
