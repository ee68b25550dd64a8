//! `gdid schema print|apply`: the DDL of a SQL store's gdid tables, for a DBA to read and apply
//! before an application role with only `SELECT, INSERT, UPDATE` on them opens the store.

use std::io::{self, Write};

use gdid::StoreKind;
use gdid::sql::SqlStore;

use crate::store::OneStore;

/// `gdid schema …`.
#[derive(Debug, clap::Subcommand)]
pub(crate) enum SchemaCommand {
    /// Print the DDL of the store's gdid tables (its dialect, its PostgreSQL schema), current
    /// version, each statement idempotent.
    Print(SchemaArgs),
    /// Make the store's gdid tables current (as a role that may create them), then check them
    /// as a store opening them does.
    Apply(SchemaArgs),
}

/// The store of a `gdid schema` command.
#[derive(Debug, clap::Args)]
pub(crate) struct SchemaArgs {
    #[command(flatten)]
    pub store: OneStore,
}

impl SchemaCommand {
    /// The store of the command.
    pub(crate) fn store_mut(&mut self) -> &mut OneStore {
        let (SchemaCommand::Print(args) | SchemaCommand::Apply(args)) = self;
        &mut args.store
    }
}

/// Why `gdid schema` failed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SchemaFailure {
    /// A store without DDL (exit status 2).
    #[error(
        "{0} has no DDL to print or apply: MongoDB collections and their indexes are made on \
         first use, memory and http stores keep no tables"
    )]
    NoDdl(String),
    /// The store could not be reached, or refused the DDL (exit status 1; 2 for a bad URL).
    #[error(transparent)]
    Store(#[from] gdid::sql::Error),
    /// The output could not be written.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl SchemaFailure {
    /// Whether no retry will help (exit status 2): a store without DDL, a URL, a refusal
    /// ([`ErrorKind::recourse`](gdid::engine::ErrorKind::recourse)).
    pub(crate) fn is_bad_input(&self) -> bool {
        match self {
            SchemaFailure::NoDdl(_) => true,
            SchemaFailure::Store(e) => e.kind().recourse().is_lasting(),
            SchemaFailure::Output(_) => false,
        }
    }
}

/// Runs `command`, printing to `out`.
pub(crate) async fn run(command: SchemaCommand, out: &mut impl Write) -> Result<(), SchemaFailure> {
    let (SchemaCommand::Print(args) | SchemaCommand::Apply(args)) = &command;
    let url = args.store.url();
    let label = crate::store::label(url);
    if !matches!(
        StoreKind::of(url),
        Ok(StoreKind::Sqlite | StoreKind::MySql | StoreKind::Postgres)
    ) {
        return Err(SchemaFailure::NoDdl(label));
    }
    // print creates nothing (no SQLite file); apply makes the file and the tables.
    let store = match command {
        SchemaCommand::Print(_) => SqlStore::connect_existing(url).await?,
        SchemaCommand::Apply(_) => SqlStore::connect(url).await?,
    };
    match command {
        SchemaCommand::Print(_) => {
            writeln!(out, "-- the gdid tables of {label}")?;
            write!(out, "{}", store.schema_sql().await?)?;
        }
        SchemaCommand::Apply(_) => {
            store.apply_schema().await?;
            writeln!(out, "the gdid tables of {label} are current")?;
        }
    }
    out.flush()?;
    Ok(())
}
