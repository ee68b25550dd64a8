//! `gdid agent`: keeps every shard supplied with open hi-lo windows, which
//! `gdid next --strategy window` then issues ids from.

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use gdid::StoreKind;
use gdid::engine::windows::{AgentError, AgentReport, WindowAgent, WindowShard};
use gdid::engine::{NameKind, validate_name};

use crate::failure::Failure;

/// The arguments of `gdid agent`.
#[derive(Debug, clap::Args)]
pub(crate) struct AgentArgs {
    /// The shards: SQL stores (sqlite:PATH, mysql://…, postgres://…) or MongoDB stores
    /// (mongodb://…), not both; the same ones `gdid next --strategy window` is given.
    /// Without --store: the URLs of --store-file, else of the
    /// GDID_STORE environment variable (separated by whitespace), else sqlite:gdid.sqlite.
    #[arg(long = "store", value_name = "URL", value_parser = crate::store::StoreUrl)]
    pub stores: Vec<String>,
    /// A file of store URLs, one a line (`#` starts a comment), instead of --store: no password
    /// in the command line.
    #[arg(long, value_name = "FILE", conflicts_with = "stores")]
    pub store_file: Option<PathBuf>,
    /// A sequence to supply; repeat for several. None: every sequence found on a shard.
    #[arg(long = "sequence", value_name = "Q")]
    sequences: Vec<String>,
    /// Open windows to keep on every shard, for each sequence.
    #[arg(long, value_name = "K")]
    min_open_windows: u64,
    /// Values in each window the agent opens.
    #[arg(long, value_name = "W")]
    window_size: u64,
    /// Run again every SECS seconds until Ctrl-C; a round that fails is reported on stderr and
    /// the next round runs all the same.
    #[arg(long, value_name = "SECS")]
    watch: Option<u64>,
    /// Also delete, in every round, the used-up windows of each sequence but the N latest on
    /// each shard (open windows and claims are never deleted). Without it nothing is deleted.
    #[arg(long, value_name = "N")]
    keep_used_windows: Option<u64>,
}

impl<E: std::error::Error> From<AgentError<E>> for Failure {
    fn from(e: AgentError<E>) -> Self {
        match e {
            AgentError::Config(_) => Failure::BadArguments(e.to_string()),
            e => Failure::Failed(e.to_string()),
        }
    }
}

impl AgentArgs {
    /// Checks everything that needs no store: the kind of the shards, the numbers, the names.
    fn check(&self) -> Result<Option<Duration>, Failure> {
        let bad = |message: String| Err(Failure::BadArguments(message));
        if self.min_open_windows == 0 {
            return bad("--min-open-windows 0 would never open a window: give 1 or more".into());
        }
        let watch = match self.watch {
            Some(0) => return bad("--watch 0: give the seconds between rounds, 1 or more".into()),
            watch => watch.map(Duration::from_secs),
        };
        for name in &self.sequences {
            validate_name(NameKind::Sequence, name)
                .map_err(|e| Failure::BadArguments(e.to_string()))?;
        }
        let mut kind = None;
        for (k, url) in self.stores.iter().enumerate() {
            let label = crate::store::label(url);
            let this = match gdid::store_kind(url)? {
                StoreKind::Memory => {
                    return bad(format!(
                        "--store {label}: the agent opens windows in database stores (an \
                         in-process store is gone when the agent exits)"
                    ));
                }
                kind => kind.is_sql(),
            };
            if kind.is_some_and(|kind| kind != this) {
                return bad(format!(
                    "--store {label}: the shards must all be SQL stores or all MongoDB, not both"
                ));
            }
            kind = Some(this);
            if self.stores[..k].contains(url) {
                return bad(format!(
                    "--store {label} is given twice: each shard is a different store"
                ));
            }
        }
        match kind {
            Some(_) => Ok(watch),
            None => bad("no --store: give one store per shard".into()),
        }
    }
}

/// Runs `gdid agent`.
pub(crate) async fn run(args: AgentArgs) -> Result<(), Failure> {
    let watch = args.check()?;
    let sequences: Vec<&str> = args.sequences.iter().map(String::as_str).collect();
    // Every store a shard labelled by its URL (without the password), prepared.
    let stores = gdid::Store::options()
        .unnumbered()
        .open_all(&args.stores)
        .await?;
    let mut agent = stores
        .window_agent(args.window_size, args.min_open_windows)
        .await?;
    if let Some(keep) = args.keep_used_windows {
        agent = agent.keep_used_windows(keep);
    }
    supply(&agent, &args, &sequences, watch).await
}

/// One round, or (`--watch`) a round every period until Ctrl-C.
async fn supply<S: WindowShard>(
    agent: &WindowAgent<S>,
    args: &AgentArgs,
    sequences: &[&str],
    watch: Option<Duration>,
) -> Result<(), Failure> {
    let Some(period) = watch else {
        let report = agent.run_once(sequences).await?;
        let summary = summary(agent, args, sequences, &report).await;
        return write_report(&report, &summary);
    };
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    // Without a Ctrl-C handler, Ctrl-C still ends the process (its default action).
    let stop = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::pin!(stop);
    for round in 1_u64.. {
        tokio::select! {
            () = &mut stop => break,
            _ = ticks.tick() => {}
        }
        tokio::select! {
            () = &mut stop => break,
            result = agent.run_once(sequences) => match result {
                Ok(report) => {
                    let summary = summary(agent, args, sequences, &report).await;
                    write_report(&report, &format!("round {round}: {summary}"))?;
                }
                Err(e @ AgentError::Config(_)) => return Err(e.into()),
                // What an agent is for: the next round may find the shard back.
                Err(e) => eprintln!("gdid: round {round} failed: {e}"),
            },
        }
    }
    Ok(())
}

/// One line saying what a round did.
async fn summary<S: WindowShard>(
    agent: &WindowAgent<S>,
    args: &AgentArgs,
    sequences: &[&str],
    report: &AgentReport,
) -> String {
    let opened = opened_summary(agent, args.min_open_windows, sequences, report).await;
    match report.pruned {
        0 => opened,
        1 => format!("{opened}; deleted 1 used-up window"),
        n => format!("{opened}; deleted {n} used-up windows"),
    }
}

/// What a round opened, in words (`min_open_windows`: what the agent keeps open).
async fn opened_summary<S: WindowShard>(
    agent: &WindowAgent<S>,
    min_open_windows: u64,
    sequences: &[&str],
    report: &AgentReport,
) -> String {
    match report.created.len() {
        0 if sequences.is_empty() && !any_sequence(agent).await => {
            "opened no window: no sequence on the shards yet (name one with --sequence)".into()
        }
        0 => format!(
            "opened no window: every shard has {min_open_windows} open window(s) of each sequence"
        ),
        1 => "opened 1 window".into(),
        n => format!("opened {n} windows"),
    }
}

/// Whether a shard has a window or a claim of any sequence (`true` when that is not known).
async fn any_sequence<S: WindowShard>(agent: &WindowAgent<S>) -> bool {
    for (_, shard) in agent.shards() {
        match shard.sequences().await {
            Ok(names) if names.is_empty() => {}
            _ => return true,
        }
    }
    false
}

/// `shard sequence start..end`, one line per window opened, then the summary.
fn write_report(report: &AgentReport, summary: &str) -> Result<(), Failure> {
    let mut out = io::stdout().lock();
    for (sequence, shard, window) in &report.created {
        writeln!(out, "{shard} {sequence} {}..{}", window.start, window.end)?;
    }
    writeln!(out, "{summary}")?;
    out.flush()?;
    Ok(())
}
