//! `gdid schema print|apply`: the DDL of a SQL store's gdid tables, for a DBA to read and apply
//! before an application role with only `SELECT, INSERT, UPDATE` on them opens the store.

use std::io::Write;

use gdid::StoreKind;
use gdid::sql::SqlStore;

use crate::failure::Failure;
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

/// Runs `command`, printing to `out`.
pub(crate) async fn run(command: SchemaCommand, out: &mut impl Write) -> Result<(), Failure> {
    let (SchemaCommand::Print(args) | SchemaCommand::Apply(args)) = &command;
    let url = args.store.url();
    let label = crate::store::label(url);
    if !matches!(
        gdid::store_kind(url),
        Ok(StoreKind::Sqlite | StoreKind::MySql | StoreKind::Postgres)
    ) {
        return Err(Failure::NoDdl(label));
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
