//! `gdid next`: issue ids and print them, one a line, each batch flushed as soon as it is issued.

use std::io::{self, Write};

use clap::ValueEnum;
use serde_json::json;

use crate::form::{self, OutputForm};
use crate::inspect::Inspection;
use crate::issuer::{Issued, Issuer, Strategy};

/// Ids taken from the generator per write: every id printed was issued before it was printed, so
/// a process killed midway has printed only ids it really issued.
const BATCH: u64 = 1_000;

/// How `gdid next` prints each id.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Format {
    /// GDIDs as `era:authority:counter`; numbers in decimal; UUIDs hyphenated; ObjectIds in hex.
    #[default]
    Text,
    /// GDIDs as 24 hex digits; numbers as 16; UUIDs as 32; ObjectIds as 24.
    Hex,
    /// GDIDs in the `compact` form, as hex digits (GDIDs only).
    Compact,
    /// One JSON object a line: for GDIDs every field and form (as `gdid inspect --json`), for
    /// other ids `{"id": …}`.
    Json,
}

/// A format the strategy's ids do not have.
#[derive(Debug, thiserror::Error)]
#[error("--format compact is a form of GDIDs: --strategy {} issues other ids", .0.name())]
pub(crate) struct NoSuchForm(pub Strategy);

impl Format {
    /// Checks, before anything is issued, that ids of `strategy` can be printed so.
    pub(crate) fn check(self, strategy: Strategy) -> Result<(), NoSuchForm> {
        if self == Format::Compact && strategy != Strategy::Gdid {
            return Err(NoSuchForm(strategy));
        }
        Ok(())
    }

    /// Writes `id` and a newline.
    pub(crate) fn write(self, id: Issued, out: &mut impl Write) -> io::Result<()> {
        match (self, id) {
            (Format::Text, id) => writeln!(out, "{id}"),
            (Format::Hex, Issued::Gdid(id)) => writeln!(out, "{id:x}"),
            (Format::Hex, Issued::Number(id)) => writeln!(out, "{id:016x}"),
            (Format::Hex, Issued::Uuid(id)) => writeln!(out, "{}", id.simple()),
            (Format::Hex, Issued::ObjectId(id)) => writeln!(out, "{}", id.to_hex()),
            (Format::Compact, Issued::Gdid(id)) => {
                writeln!(out, "{}", form::write(OutputForm::Compact, id))
            }
            (Format::Json, Issued::Gdid(id)) => Inspection::of(id).write_json(out),
            (Format::Json, Issued::Number(id)) => writeln!(out, "{}", json!({ "id": id })),
            (Format::Json, id) => writeln!(out, "{}", json!({ "id": id.to_string() })),
            // Refused by `check` before anything is issued; the text form, should it get here.
            (Format::Compact, id) => writeln!(out, "{id}"),
        }
    }
}

/// Why `gdid next` stopped.
#[derive(Debug, thiserror::Error)]
pub(crate) enum NextError {
    /// The generator gave no id.
    #[error(transparent)]
    Generator(#[from] gdid::engine::Error),
    /// The output could not be written.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

/// Issues `count` ids from `issuer` and prints them to `out` in `format`.
pub(crate) async fn issue(
    issuer: &Issuer,
    count: u64,
    format: Format,
    out: &mut impl Write,
) -> Result<(), NextError> {
    let mut left = count;
    while left > 0 {
        let n = left.min(BATCH);
        for id in issuer.next_ids(n).await? {
            format.write(id, out)?;
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

    fn line(format: Format, id: Issued) -> String {
        let mut out = Vec::new();
        format.write(id, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn each_format_of_each_kind_of_id() {
        let gdid = Issued::Gdid(Gdid::from_parts(1293, 3, 57).unwrap());
        assert_eq!(line(Format::Text, gdid), "1293:3:57\n");
        assert_eq!(line(Format::Hex, gdid), "0000050d3000000000000039\n");
        assert_eq!(line(Format::Compact, gdid), "8d0a9307\n");
        assert!(line(Format::Json, gdid).starts_with(r#"{"era":1293,"authority":3,"counter":57,"#));
        let number = Issued::Number(255);
        assert_eq!(line(Format::Text, number), "255\n");
        assert_eq!(line(Format::Hex, number), "00000000000000ff\n");
        assert_eq!(line(Format::Json, number), "{\"id\":255}\n");
        let uuid = Issued::Uuid(gdid::uuid::Uuid::from_u128(
            0xa1a2a3a4b1b2c1c2d1d2d3d4d5d6d7d8,
        ));
        assert_eq!(
            line(Format::Text, uuid),
            "a1a2a3a4-b1b2-c1c2-d1d2-d3d4d5d6d7d8\n"
        );
        assert_eq!(
            line(Format::Hex, uuid),
            "a1a2a3a4b1b2c1c2d1d2d3d4d5d6d7d8\n"
        );
        assert_eq!(
            line(Format::Json, uuid),
            "{\"id\":\"a1a2a3a4-b1b2-c1c2-d1d2-d3d4d5d6d7d8\"}\n"
        );
        assert!(Format::Compact.check(Strategy::UuidV7).is_err());
        assert!(Format::Compact.check(Strategy::Gdid).is_ok());
    }
}
