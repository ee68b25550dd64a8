//! `gdid`: inspect and convert GDIDs.
//!
//! Exit status: 0 on success, 2 for bad input (a value, a flag), 1 for any other failure.

mod form;
mod inspect;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::form::{BadValue, InputForm};
use crate::inspect::Inspection;

#[derive(Debug, Parser)]
#[command(
    name = "gdid",
    version,
    about = "Global distributed ids: inspect and convert GDIDs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the fields and every form of one id.
    #[command(
        after_help = "Examples:\n  gdid inspect 1293:3:57\n  gdid inspect 0000050d3000000000000039 --json\n  gdid inspect --from compact 8d0a9307"
    )]
    Inspect {
        /// The form VALUE is given in; bytes, leb and compact take hex digits.
        #[arg(long, value_enum, default_value_t = InputForm::Text)]
        from: InputForm,
        /// Print one JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// The id.
        value: String,
    },
}

/// Why the command failed, and so its exit status.
#[derive(Debug, thiserror::Error)]
enum Failure {
    #[error(transparent)]
    BadValue(#[from] BadValue),
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl Failure {
    fn exit_code(&self) -> ExitCode {
        match self {
            Failure::BadValue(_) => ExitCode::from(2),
            Failure::Output(_) => ExitCode::from(1),
        }
    }
}

fn run(cli: Cli) -> Result<(), Failure> {
    match cli.command {
        Command::Inspect { from, json, value } => {
            let id = form::read(from, &value)?;
            let inspection = Inspection::of(id);
            let mut out = io::stdout().lock();
            if json {
                inspection.write_json(&mut out)?;
            } else {
                inspection.write_table(&mut out)?;
            }
            out.flush()?;
        }
    }
    Ok(())
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(failure) => {
            eprintln!("gdid: {failure}");
            failure.exit_code()
        }
    }
}
