//! `gdid sequences`: what a store's counter records say (`list`, `show`), raising the floor
//! of one (`set-floor`), moving records to a new era after a restore (`fence`), and moving a
//! sharded counter's ranges and the hi-lo windows forward after a failover (`skip-ranges`,
//! `skip-windows`). The rules are the engine's (`gdid_engine::backend::raise_floor`,
//! `gdid::engine::sequences`); this module reads the command line and prints.

use std::io::Write;
use std::time::Duration;

use clap::Subcommand;
use gdid::engine::CounterState;
use gdid::engine::sequences::Sequence;
use gdid::{FenceScope, Store};
use serde_json::json;

use crate::failure::Failure;
use crate::form::Format;
use crate::store::OneStore;

/// `gdid sequences …`.
#[derive(Debug, Subcommand)]
pub(crate) enum SequencesCommand {
    /// Every counter record of the store: authority, scope, sequence, era, next counter, counters
    /// used, the last allocation's time, the recent rate and the runway.
    List {
        #[command(flatten)]
        store: OneStore,
        /// text: a table; json: one JSON array, an object per record.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// The counter records of one sequence (of every authority number, and its one-at-a-time
    /// counter).
    Show {
        #[command(flatten)]
        store: OneStore,
        #[command(flatten)]
        name: NameArgs,
        /// text: a table; json: one JSON array, an object per record.
        #[arg(long, value_enum, default_value_t)]
        format: Format,
    },
    /// Raise the floor of a sequence: its ids from now on have counter N or more (in ERA), even
    /// while generators run. Never lowers it, and cannot be undone: --scope and --sequence are
    /// required.
    SetFloor {
        #[command(flatten)]
        store: OneStore,
        /// The scope (think: a database).
        #[arg(long)]
        scope: String,
        /// The sequence (think: a table).
        #[arg(long)]
        sequence: String,
        /// The next counter to issue: one past the largest already used.
        #[arg(long, value_name = "N")]
        at: u64,
        /// The era of the floor.
        #[arg(long, value_name = "ERA", default_value_t = 0)]
        era: u32,
        /// The one-at-a-time counter of the sequence (`gdid next --strategy one-at-a-time`)
        /// instead of the GDIDs of the store's authority number.
        #[arg(long)]
        counter: bool,
    },
    /// Move GDID counter records to a new era, as after a restore of the store from a backup (a
    /// dump reloaded, a snapshot, a copied SQLite file): the restored records may be behind
    /// blocks issued after the backup. Each goes to era max(era + 1, seconds since 2025), so
    /// every id issued afterwards sorts after every id issued before. Safe while generators run.
    /// One-at-a-time counters have no era: raise their floors (set-floor --counter).
    Fence {
        #[command(flatten)]
        store: OneStore,
        /// Every GDID record of the store.
        #[arg(long, conflicts_with_all = ["scope", "sequence"], required_unless_present_any = ["scope", "sequence"])]
        all: bool,
        /// The scope of the records to move (with --sequence).
        #[arg(long, requires = "sequence")]
        scope: Option<String>,
        /// The sequence of the records to move (with --scope).
        #[arg(long, requires = "scope")]
        sequence: Option<String>,
    },
    /// Move every range of a sharded counter forward by N values, as after a failover to a
    /// replica or a restore that may have lost values the ranges issued: a u64 has no era, so
    /// the ranges refuse to issue until then. Choose N at least the values one range may have
    /// issued since the copy's last update. Safe while generators run.
    SkipRanges {
        #[command(flatten)]
        store: OneStore,
        /// The sequence of the ranges.
        #[arg(long)]
        sequence: String,
        /// How many values each range skips (at most to its end).
        #[arg(long, value_name = "N")]
        by: u64,
    },
    /// Close the open hi-lo windows of a sequence on a SQL store and skip N values above its
    /// high-water mark, after a failover to a replica or a restore from a backup, so the agent
    /// opens the next windows past anything the lost copy may have handed out. Safe while
    /// generators and agents run.
    SkipWindows {
        #[command(flatten)]
        windows: WindowsArgs,
        /// How many values to skip above the high-water mark.
        #[arg(long, value_name = "N")]
        by: u64,
    },
    /// Delete the used-up hi-lo windows of a sequence but the KEEP latest (open windows and the
    /// claims that hold the high-water mark are kept): a long-running shard does not slow down.
    PruneWindows {
        #[command(flatten)]
        windows: WindowsArgs,
        /// How many used-up windows to keep, the latest.
        #[arg(long, default_value_t = 10)]
        keep: u64,
    },
}

impl SequencesCommand {
    /// The store of the command.
    pub(crate) fn store_mut(&mut self) -> &mut OneStore {
        match self {
            SequencesCommand::List { store, .. }
            | SequencesCommand::Show { store, .. }
            | SequencesCommand::SetFloor { store, .. }
            | SequencesCommand::Fence { store, .. }
            | SequencesCommand::SkipRanges { store, .. } => store,
            SequencesCommand::SkipWindows { windows, .. }
            | SequencesCommand::PruneWindows { windows, .. } => &mut windows.store,
        }
    }
}

/// `--scope S --sequence Q`.
#[derive(Debug, clap::Args)]
pub(crate) struct NameArgs {
    /// The scope (think: a database).
    #[arg(long, default_value = "default")]
    scope: String,
    /// The sequence (think: a table).
    #[arg(long, default_value = "ids")]
    sequence: String,
}

/// `--store URL --sequence Q`: the hi-lo windows of a sequence.
#[derive(Debug, clap::Args)]
pub(crate) struct WindowsArgs {
    #[command(flatten)]
    store: OneStore,
    /// The sequence of the windows.
    #[arg(long)]
    sequence: String,
}

/// The store of `url`, its authority number neither read nor recorded: moving counters, ranges
/// and windows need none.
async fn unnumbered(url: &str) -> Result<Store, gdid::StoreError> {
    Store::options().unnumbered().open(url).await
}

/// The store of `url` to read it: nothing is created (no SQLite file, no table) and no
/// authority number is read or recorded, so a store only read stays as it was.
async fn to_read(url: &str) -> Result<Store, gdid::StoreError> {
    Store::options().create_nothing().open(url).await
}

/// Runs `command`, printing to `out`.
pub(crate) async fn run(command: SequencesCommand, out: &mut impl Write) -> Result<(), Failure> {
    match command {
        SequencesCommand::List { store, format } => {
            let store = to_read(store.url()).await?;
            print(&store.sequences().await?, format, out)
        }
        SequencesCommand::Show {
            store,
            name,
            format,
        } => {
            let store = to_read(store.url()).await?;
            let found: Vec<Sequence> = store
                .sequences()
                .await?
                .into_iter()
                .filter(|s| s.scope == name.scope && s.sequence == name.sequence)
                .collect();
            if found.is_empty() {
                return Err(Failure::NoSuchSequence {
                    url: store.label().to_owned(),
                    scope: name.scope,
                    sequence: name.sequence,
                });
            }
            print(&found, format, out)
        }
        SequencesCommand::PruneWindows { windows, keep } => {
            let store = unnumbered(windows.store.url()).await?;
            let pruned = store.prune_windows(&windows.sequence, keep).await?;
            let done = format!("{pruned} used-up window(s) deleted");
            say(out, &store, &windows.sequence, &done)
        }
        SequencesCommand::Fence {
            store,
            all: _,
            scope,
            sequence,
        } => {
            let store = unnumbered(store.url()).await?;
            let which = match (&scope, &sequence) {
                (Some(scope), Some(sequence)) => FenceScope::Sequence { scope, sequence },
                _ => FenceScope::All,
            };
            let counters: Vec<Sequence> = store
                .sequences()
                .await?
                .into_iter()
                .filter(|s| s.one_at_a_time && which.covers(s))
                .collect();
            let fenced = store.fence(which).await?;
            let label = store.label();
            for f in &fenced {
                let (scope, sequence, key) = (&f.scope, &f.sequence, f.key);
                let (from, era) = (f.from_era, f.era);
                writeln!(
                    out,
                    "{label} {scope}/{sequence} (authority {key}): era {from} -> era {era}"
                )?;
            }
            for c in &counters {
                let (scope, sequence) = (&c.scope, &c.sequence);
                writeln!(
                    out,
                    "{label} {scope}/{sequence} (one-at-a-time counter): not moved, a u64 has \
                     no era; raise its floor past every value it issued: gdid sequences \
                     set-floor --counter --scope {scope} --sequence {sequence} --at N"
                )?;
            }
            if fenced.is_empty() && counters.is_empty() {
                writeln!(out, "{label}: no counter record to move")?;
            }
            Ok(())
        }
        SequencesCommand::SkipWindows { windows, by } => {
            let store = unnumbered(windows.store.url()).await?;
            let closed = store.skip_windows(&windows.sequence, by).await?;
            let done = format!(
                "{closed} open window(s) closed, {by} values skipped above the high-water mark"
            );
            say(out, &store, &windows.sequence, &done)
        }
        SequencesCommand::SkipRanges {
            store,
            sequence,
            by,
        } => {
            let store = unnumbered(store.url()).await?;
            let moved = store.skip_ranges(&sequence, by).await?;
            let done = format!("{moved} range(s) moved forward by {by} values");
            say(out, &store, &sequence, &done)
        }
        SequencesCommand::SetFloor {
            store,
            scope,
            sequence,
            at,
            era,
            counter,
        } => {
            let (scope, sequence) = (&scope, &sequence);
            let (store, moved, whose) = if counter {
                let store = unnumbered(store.url()).await?;
                let moved = store.raise_counter_floor(scope, sequence, at).await?;
                (store, moved, "one-at-a-time counter".to_owned())
            } else {
                // A GDID record is the authority's: the store's number is settled first.
                let store = Store::open(store.url()).await?;
                let floor = CounterState { era, next: at };
                let moved = store.raise_floor(scope, sequence, floor).await?;
                // Opened numbered, so the store has its number; never a made-up 0.
                let whose = match store.authority_number() {
                    Some(number) => format!("authority {number}"),
                    None => "GDID record".to_owned(),
                };
                (store, moved, whose)
            };
            let what = if moved { "raised to" } else { "already at" };
            writeln!(
                out,
                "{} {scope}/{sequence} ({whose}): {what} era {era}, next counter {at}",
                store.label()
            )?;
            Ok(())
        }
    }
}

/// Prints `LABEL SEQUENCE: DONE`, what a change did to a sequence of `store`.
fn say(out: &mut impl Write, store: &Store, sequence: &str, done: &str) -> Result<(), Failure> {
    writeln!(out, "{} {sequence}: {done}", store.label())?;
    Ok(())
}

/// Prints `sequences` as a table or as JSON.
fn print(sequences: &[Sequence], format: Format, out: &mut impl Write) -> Result<(), Failure> {
    if format == Format::Json {
        let rows: Vec<_> = sequences.iter().map(to_json).collect();
        writeln!(out, "{}", serde_json::Value::Array(rows))?;
        return Ok(());
    }
    let header = [
        "authority",
        "scope",
        "sequence",
        "era",
        "next",
        "used",
        "last allocation (UTC)",
        "rate/s",
        "runway",
    ]
    .map(str::to_owned);
    let rows: Vec<[String; 9]> = sequences
        .iter()
        .map(|s| {
            [
                authority(s),
                s.scope.clone(),
                s.sequence.clone(),
                s.era.to_string(),
                s.next.to_string(),
                s.used.to_string(),
                s.last_allocation_ms.map_or_else(unknown, utc),
                s.rate.map_or_else(unknown, |rate| format!("{rate:.1}")),
                s.runway.map_or_else(unknown, human),
            ]
        })
        .collect();
    let mut widths = header.clone().map(|h| h.len());
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> = row
            .iter()
            .zip(widths)
            .map(|(cell, width)| format!("{cell:<width$}"))
            .collect();
        writeln!(out, "{}", cells.join("  ").trim_end())?;
    }
    if rows.is_empty() {
        writeln!(out, "(no counter records)")?;
    }
    Ok(())
}

fn unknown() -> String {
    "unknown".to_owned()
}

/// The authority column: the number, or `counter` for a one-at-a-time counter.
fn authority(sequence: &Sequence) -> String {
    if sequence.one_at_a_time {
        "counter".to_owned()
    } else {
        sequence.key.to_string()
    }
}

fn to_json(s: &Sequence) -> serde_json::Value {
    json!({
        "authority": (!s.one_at_a_time).then_some(s.key),
        "kind": if s.one_at_a_time { "one-at-a-time" } else { "gdid" },
        "scope": s.scope,
        "sequence": s.sequence,
        "era": s.era,
        "next": s.next,
        "used": s.used.to_string(),
        "last_allocation_ms": s.last_allocation_ms,
        "last_allocation": s.last_allocation_ms.map(utc),
        "last_size": s.last_size,
        "rate_per_second": s.rate,
        "runway_seconds": s.runway.map(|r| r.as_secs_f64()),
        "eras_left": s.eras_left(),
    })
}

/// Milliseconds since the Unix epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ` (the civil calendar from a
/// day count, as in Howard Hinnant's `civil_from_days`).
fn utc(ms: i64) -> String {
    let (days, ms_of_day) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let (h, m, s, milli) = (
        ms_of_day / 3_600_000,
        ms_of_day / 60_000 % 60,
        ms_of_day / 1_000 % 60,
        ms_of_day % 1_000,
    );
    format!("{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.{milli:03}Z")
}

/// A runway in the largest unit that fits: `45 s`, `3.2 h`, `12.5 days`, `3.1e9 years`.
fn human(runway: Duration) -> String {
    let seconds = runway.as_secs_f64();
    let year = 365.25 * 86_400.0;
    if seconds < 120.0 {
        format!("{seconds:.0} s")
    } else if seconds < 7_200.0 {
        format!("{:.1} min", seconds / 60.0)
    } else if seconds < 172_800.0 {
        format!("{:.1} h", seconds / 3_600.0)
    } else if seconds < year {
        format!("{:.1} days", seconds / 86_400.0)
    } else if seconds < 1e6 * year {
        format!("{:.1} years", seconds / year)
    } else {
        format!("{:.1e} years", seconds / year)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_utc() {
        assert_eq!(utc(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(utc(951_782_400_123), "2000-02-29T00:00:00.123Z");
        assert_eq!(utc(1_795_000_000_000), "2026-11-18T11:06:40.000Z");
    }

    #[test]
    fn runways_are_human() {
        assert_eq!(human(Duration::from_secs(45)), "45 s");
        assert_eq!(human(Duration::from_secs(3 * 3_600)), "3.0 h");
        assert_eq!(human(Duration::from_secs(10 * 86_400)), "10.0 days");
        assert!(human(Duration::from_secs(u64::MAX)).ends_with("e11 years"));
    }
}
