//! `gdid verify`: reads the ids a fleet issued (files or stdin, one a line, in any form `gdid
//! convert --from auto` reads) and says whether any was issued twice (`gdid::verify`).

use std::fs::File;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;

use gdid::Gdid;
use gdid::verify::{Ledger, Report};

use crate::failure::Failure;

/// `gdid verify …`.
#[derive(Debug, clap::Args)]
pub(crate) struct VerifyArgs {
    /// Files of ids, one a line; none, or `-`: stdin. Each file is a writer, unless --labelled.
    #[arg(value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Each line is `LABEL ID`: the label names the writer (a process, a client) that got the id.
    #[arg(long)]
    labelled: bool,
    /// An id that does not sort after its writer's previous one is a failure too (exit 1), not
    /// only reported: for writers that issue in order.
    #[arg(long)]
    ordered: bool,
}

/// Reads every file of `args` (or stdin), prints the report to `out`.
///
/// # Errors
///
/// As [`Failure`].
pub(crate) fn run(args: &VerifyArgs, out: &mut impl Write) -> Result<(), Failure> {
    let mut ledger = Ledger::new();
    let stdin = [PathBuf::from("-")];
    let files = if args.files.is_empty() {
        &stdin[..]
    } else {
        &args.files[..]
    };
    for file in files {
        let name = if file.as_os_str() == "-" {
            "stdin".to_owned()
        } else {
            file.display().to_string()
        };
        let reader: Box<dyn BufRead> = if file.as_os_str() == "-" {
            Box::new(io::stdin().lock())
        } else {
            let opened = File::open(file).map_err(|source| Failure::Unreadable {
                file: name.clone(),
                source,
            })?;
            Box::new(BufReader::new(opened))
        };
        read(reader, &name, args.labelled, &mut ledger)?;
    }
    let report = ledger.report();
    write!(out, "{report}")?;
    out.flush()?;
    verdict(&report, args.ordered)
}

/// The lines of `reader` (named `name`) into `ledger`.
fn read(
    reader: impl BufRead,
    name: &str,
    labelled: bool,
    ledger: &mut Ledger,
) -> Result<(), Failure> {
    // The file is the writer, unless each line names its own.
    let whole_file = (!labelled).then(|| ledger.writer(name));
    for (number, line) in (1..).zip(reader.lines()) {
        let place = format!("{name}:{number}");
        let line = line.map_err(|source| Failure::Unreadable {
            file: name.to_owned(),
            source,
        })?;
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        let bad = |reason: String| Failure::BadLine {
            place: place.clone(),
            reason,
        };
        let (writer, form) = match whole_file {
            Some(writer) => (writer, line),
            None => {
                let (label, form) = line
                    .split_once(char::is_whitespace)
                    .ok_or_else(|| bad(format!("{line:?} is not `LABEL ID`")))?;
                (ledger.writer(label), form.trim())
            }
        };
        let id = Gdid::parse_any(form).map_err(|e| bad(format!("{form:?} is no id: {e}")))?;
        ledger.record_as(writer, id, form, &place);
    }
    Ok(())
}

/// Exit status 1 for repeats, and with `ordered` for ids gone backwards.
fn verdict(report: &Report, ordered: bool) -> Result<(), Failure> {
    if !report.is_unique() {
        return Err(Failure::Failed(format!(
            "{} id(s) issued more than once",
            report.repeated
        )));
    }
    if ordered && report.went_backwards > 0 {
        return Err(Failure::Failed(format!(
            "{} id(s) went backwards within their writer",
            report.went_backwards
        )));
    }
    Ok(())
}
