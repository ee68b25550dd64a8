//! The load scenario: processes issuing from one store at a steady rate for a minute. No id may
//! repeat across them, and the store's round trips per second must be what the dynamic block size
//! predicts.
//!
//! Each process is this crate's binary run as `gdid-faults load-worker …` ([`Worker`]): it issues
//! from its threads, then writes every id it issued to stdout (12 bytes each) and a [`Report`]
//! line to stderr. The parent ([`load`]) checks all of them together.

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use gdid_core::Gdid;
use gdid_engine::BlockGenerator;

use crate::calls::Calls;
use crate::error::SetupError;
use crate::row::{Row, Timing, duplicates};
use crate::store;

/// The shape of a load run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Load {
    /// Processes issuing at once.
    pub processes: u32,
    /// Threads (tasks on a runtime of as many threads) in each process.
    pub threads: u32,
    /// Ids a second each thread asks for, in whole thousands.
    pub per_thread: u32,
    /// How long the processes issue.
    pub length: Duration,
    /// The cover time of each process's generator.
    pub cover: Duration,
    /// The round trips are counted after this much of the run, once the rate is measured.
    pub steady_after: Duration,
}

impl Load {
    /// The full load run: 8 processes × 2 threads × 10,000 ids/s for 60 s, with a cover of 2 s
    /// (so that a minute holds enough allocations to count).
    pub const FULL: Load = Load {
        processes: 8,
        threads: 2,
        per_thread: 10_000,
        length: Duration::from_secs(60),
        cover: Duration::from_secs(2),
        steady_after: Duration::from_secs(10),
    };

    /// The store's round trips a second once each generator has measured its rate `r`. A
    /// generator fetches the next block when half of the current one is left, and sizes blocks
    /// so that this half lasts the cover time `T`: blocks of `2 r T` ids, one every `2 T`
    /// seconds at any rate, so `processes / (2 T)` in all (gdid-engine's `sizing` module).
    pub fn predicted_round_trips_per_second(&self) -> f64 {
        f64::from(self.processes) / (2.0 * self.cover.as_secs_f64())
    }

    /// Ids a second asked for by all processes together.
    pub fn total_rate(&self) -> u64 {
        u64::from(self.processes) * u64::from(self.threads) * u64::from(self.per_thread)
    }
}

/// What one worker process did, as it reports it on the last line of its stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Report {
    /// Blocks fetched from the store in all.
    pub allocations: u64,
    /// Blocks fetched after [`Load::steady_after`].
    pub steady_allocations: u64,
    /// How long that steady part lasted, in milliseconds.
    pub steady_millis: u64,
    /// Calls that returned an error.
    pub errors: u64,
    /// The process's callers' latency at the 99.9th percentile, in nanoseconds.
    pub p999_nanos: u64,
    /// Its slowest call, in nanoseconds.
    pub slowest_nanos: u64,
}

impl Report {
    /// The report line: `report` and the fields, space-separated, in declaration order.
    pub fn line(&self) -> String {
        format!(
            "report {} {} {} {} {} {}",
            self.allocations,
            self.steady_allocations,
            self.steady_millis,
            self.errors,
            self.p999_nanos,
            self.slowest_nanos
        )
    }

    /// The report in the last line of `stderr`.
    ///
    /// # Errors
    ///
    /// When there is no valid report line (the worker failed: the error is its stderr).
    pub fn parse(stderr: &str) -> Result<Report, SetupError> {
        let no_report = || format!("the load worker gave no report; its stderr: {stderr}");
        let line = stderr.lines().last().ok_or_else(no_report)?;
        let mut fields = line
            .strip_prefix("report ")
            .ok_or_else(no_report)?
            .split(' ');
        let mut field =
            || -> Result<u64, SetupError> { Ok(fields.next().ok_or_else(no_report)?.parse()?) };
        let report = Report {
            allocations: field()?,
            steady_allocations: field()?,
            steady_millis: field()?,
            errors: field()?,
            p999_nanos: field()?,
            slowest_nanos: field()?,
        };
        match fields.next() {
            None => Ok(report),
            Some(_) => Err(no_report().into()),
        }
    }
}

/// One load process: the `load-worker` arguments of the `gdid-faults` binary.
#[derive(Debug, Clone, PartialEq)]
pub struct Worker {
    /// The store's URL.
    pub store: String,
    /// The scope all processes share.
    pub scope: String,
    /// The run.
    pub load: Load,
}

impl Worker {
    /// The command-line arguments after `load-worker`.
    pub fn args(&self) -> Vec<String> {
        let load = &self.load;
        vec![
            self.store.clone(),
            self.scope.clone(),
            load.threads.to_string(),
            load.per_thread.to_string(),
            load.length.as_millis().to_string(),
            load.cover.as_millis().to_string(),
            load.steady_after.as_millis().to_string(),
        ]
    }

    /// The worker of [`args`](Self::args).
    ///
    /// # Errors
    ///
    /// When there are not 7 arguments or a number is not one.
    pub fn from_args(args: &[String]) -> Result<Worker, SetupError> {
        let [
            store,
            scope,
            threads,
            per_thread,
            length,
            cover,
            steady_after,
        ] = args
        else {
            return Err(format!("load-worker takes 7 arguments, got {}", args.len()).into());
        };
        let millis = |text: &String| text.parse().map(Duration::from_millis);
        Ok(Worker {
            store: store.clone(),
            scope: scope.clone(),
            load: Load {
                processes: 1,
                threads: threads.parse()?,
                per_thread: per_thread.parse()?,
                length: millis(length)?,
                cover: millis(cover)?,
                steady_after: millis(steady_after)?,
            },
        })
    }

    /// Issues for the run's length from its threads; writes every id issued to `ids_out`, 12
    /// bytes each.
    ///
    /// # Errors
    ///
    /// When the store cannot be set up, or writing fails.
    pub async fn run(&self, ids_out: &mut impl Write) -> Result<Report, SetupError> {
        let load = self.load;
        let ids = Arc::new(
            BlockGenerator::builder(&self.scope, "ids")
                .shared_authority(store::authority(&self.store, 1).await?)
                .cover(load.cover)
                .build()?,
        );
        // The first block is always waited for (and the connection made): before the clock of
        // the paced callers starts, or they would catch up on the ticks they missed meanwhile in
        // one burst, and the generator size its blocks for that burst.
        let first = ids.next_id().await?;
        let per_ms = load.per_thread / 1_000;
        let callers: Vec<_> = (0..load.threads)
            .map(|_| {
                let ids = Arc::clone(&ids);
                tokio::spawn(async move {
                    let mut calls = Calls::new();
                    calls.at_rate(&ids, per_ms, load.length).await;
                    calls
                })
            })
            .collect();
        tokio::time::sleep(load.steady_after).await;
        let (steady_from, allocations_before) = (Instant::now(), ids.stats().allocations);
        let mut calls = Calls::new();
        calls.ids.push(first);
        for caller in callers {
            calls.merge(caller.await?)?;
        }
        let steady_millis = u64::try_from(steady_from.elapsed().as_millis())?;
        let allocations = ids.stats().allocations;
        for id in &calls.ids {
            ids_out.write_all(id.as_bytes())?;
        }
        ids_out.flush()?;
        Ok(Report {
            allocations,
            steady_allocations: allocations - allocations_before,
            steady_millis,
            errors: calls.errors,
            p999_nanos: calls.latency.value_at_quantile(0.999),
            slowest_nanos: calls.latency.max(),
        })
    }
}

/// What a load run showed, beside its table row.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadOutcome {
    /// The table row.
    pub row: Row,
    /// Round trips a second to the store after [`Load::steady_after`], all processes together.
    pub round_trips_per_second: f64,
    /// What the block size predicts ([`Load::predicted_round_trips_per_second`]).
    pub predicted: f64,
}

/// Runs `load` against `store`: its processes (the `gdid-faults` binary at `worker`) at once,
/// all their ids checked together. The p99.9 in the row is the highest of the processes'.
///
/// # Errors
///
/// When a process cannot be started or fails.
pub fn load(worker: &Path, name: &str, store: &str, load: Load) -> Result<LoadOutcome, SetupError> {
    let worker_args = Worker {
        store: store.to_owned(),
        scope: gdid_testkit::fresh("load"),
        load,
    }
    .args();
    let processes = (0..load.processes)
        .map(|_| {
            Command::new(worker)
                .arg("load-worker")
                .args(&worker_args)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
        })
        .collect::<Result<Vec<_>, _>>()?;
    let finished = processes
        .into_iter()
        .map(|process| {
            std::thread::spawn(move || -> Result<(Vec<Gdid>, Report), String> {
                let output = process.wait_with_output().map_err(|e| e.to_string())?;
                let report = Report::parse(&String::from_utf8_lossy(&output.stderr))
                    .map_err(|e| e.to_string())?;
                let ids = output
                    .stdout
                    .chunks(Gdid::SIZE)
                    .map(Gdid::from_slice)
                    .collect::<Result<_, _>>()
                    .map_err(|e| e.to_string())?;
                Ok((ids, report))
            })
        })
        .collect::<Vec<_>>();
    let mut ids = Vec::new();
    let mut reports = Vec::new();
    for process in finished {
        let (issued, report) = process.join().map_err(|_| "a reader panicked")??;
        ids.extend(issued);
        reports.push(report);
    }
    outcome(name, load, &ids, &reports)
}

fn outcome(
    name: &str,
    load: Load,
    ids: &[Gdid],
    reports: &[Report],
) -> Result<LoadOutcome, SetupError> {
    let issued = u64::try_from(ids.len())?;
    let duplicates = duplicates(ids);
    let highest = ids.iter().map(|id| id.counter()).max().unwrap_or(0);
    let round_trips_per_second = reports
        .iter()
        .map(|r| r.steady_allocations as f64 / (r.steady_millis.max(1) as f64 / 1_000.0))
        .sum::<f64>();
    let predicted = load.predicted_round_trips_per_second();
    let nanos = |pick: fn(&Report) -> u64| reports.iter().map(pick).max().map(Duration::from_nanos);
    let done = format!(
        "{} processes × {} threads × {}k ids/s for {} s, cover {} s: {round_trips_per_second:.2} store round trips/s after the first {} s ({predicted:.2} predicted; {} allocations in all, against {} ids/s asked)",
        load.processes,
        load.threads,
        load.per_thread / 1_000,
        load.length.as_secs(),
        load.cover.as_secs(),
        load.steady_after.as_secs(),
        reports.iter().map(|r| r.allocations).sum::<u64>(),
        load.total_rate(),
    );
    Ok(LoadOutcome {
        row: Row {
            fault: format!("load ({name})"),
            done,
            issued,
            caller_errors: reports.iter().map(|r| r.errors).sum(),
            duplicates,
            // Every counter up to the highest issued was reserved by some process; the rest of
            // each process's blocks is left when it ends.
            lost_to_gaps: highest.saturating_sub(issued - duplicates),
            timing: Timing {
                recovery: None,
                p999: nanos(|r| r.p999_nanos),
                slowest: nanos(|r| r.slowest_nanos),
            },
        },
        round_trips_per_second,
        predicted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_reads_back_from_the_last_line_of_stderr() {
        let report = Report {
            allocations: 17,
            steady_allocations: 12,
            steady_millis: 50_012,
            errors: 0,
            p999_nanos: 12_700,
            slowest_nanos: 6_900_000,
        };
        let stderr = format!("a warning first\n{}\n", report.line());
        assert_eq!(Report::parse(&stderr).unwrap(), report);
        assert!(Report::parse("gdid-faults: cannot connect").is_err());
        assert!(Report::parse("report 1 2 3").is_err());
    }

    #[test]
    fn a_worker_reads_back_its_arguments() {
        let worker = Worker {
            store: "sqlite:ids.sqlite".into(),
            scope: "load_1".into(),
            load: Load {
                processes: 1,
                ..Load::FULL
            },
        };
        assert_eq!(Worker::from_args(&worker.args()).unwrap(), worker);
        assert!(Worker::from_args(&worker.args()[1..]).is_err());
    }

    #[test]
    fn the_issue_run_predicts_two_round_trips_a_second() {
        assert!((Load::FULL.predicted_round_trips_per_second() - 2.0).abs() < 1e-9);
        assert_eq!(Load::FULL.total_rate(), 160_000);
    }
}
