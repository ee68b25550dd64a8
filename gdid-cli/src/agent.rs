//! `gdid agent`: keeps every shard supplied with open hi-lo windows, which
//! `gdid next --strategy window` then issues ids from.

use std::io::{self, Write};
use std::time::Duration;

use gdid_core::generator::windows::{AgentError, AgentReport, WindowAgent, WindowShard};
use gdid_core::generator::{NameKind, validate_name};
use gdid_mongo::MongoWindowShard;

use crate::store::{DEFAULT_STORE, Store, StoreUrl, Unreachable};

/// The arguments of `gdid agent`.
#[derive(Debug, clap::Args)]
pub struct AgentArgs {
    /// The shards: SQL stores (sqlite:PATH, mysql://…, postgres://…) or MongoDB stores
    /// (mongodb://…), not both; the same ones `gdid next --strategy window` is given.
    #[arg(long = "store", value_name = "URL", default_value = DEFAULT_STORE)]
    stores: Vec<StoreUrl>,
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
}

/// Why `gdid agent` stopped.
#[derive(Debug, thiserror::Error)]
pub enum AgentFailure {
    /// The arguments cannot work (exit status 2).
    #[error("{0}")]
    BadInput(String),
    /// A store could not be connected to.
    #[error(transparent)]
    Unreachable(#[from] Unreachable),
    /// A shard failed, or the value space is used up.
    #[error("{0}")]
    Agent(String),
    /// The report could not be written.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl AgentFailure {
    /// Whether the caller's arguments are at fault (exit status 2, else 1).
    pub fn is_bad_input(&self) -> bool {
        matches!(self, AgentFailure::BadInput(_))
    }
}

impl<E: std::error::Error> From<AgentError<E>> for AgentFailure {
    fn from(e: AgentError<E>) -> Self {
        match e {
            AgentError::Config(_) => AgentFailure::BadInput(e.to_string()),
            e => AgentFailure::Agent(e.to_string()),
        }
    }
}

/// What the shards are: the agent runs over SQL stores or over MongoDB databases.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Sql,
    Mongo,
}

impl AgentArgs {
    /// Checks everything that needs no store: the kind of the shards, the numbers, the names.
    fn check(&self) -> Result<(Kind, Option<Duration>), AgentFailure> {
        let bad = |message: String| Err(AgentFailure::BadInput(message));
        if self.min_open_windows == 0 {
            return bad("--min-open-windows 0 would never open a window: give 1 or more".into());
        }
        let watch = match self.watch {
            Some(0) => return bad("--watch 0: give the seconds between rounds, 1 or more".into()),
            watch => watch.map(Duration::from_secs),
        };
        for name in &self.sequences {
            validate_name(NameKind::Sequence, name)
                .map_err(|e| AgentFailure::BadInput(e.to_string()))?;
        }
        let mut kind = None;
        for (k, url) in self.stores.iter().enumerate() {
            let this = match url {
                StoreUrl::Sql(_) => Kind::Sql,
                StoreUrl::Mongo(_) => Kind::Mongo,
                StoreUrl::Memory => {
                    return bad(
                        "--store memory: the agent opens windows in database stores (an \
                         in-process store is gone when the agent exits)"
                            .into(),
                    );
                }
            };
            if kind.is_some_and(|kind| kind != this) {
                return bad(format!(
                    "--store {url}: the shards must all be SQL stores or all MongoDB, not both"
                ));
            }
            kind = Some(this);
            if self.stores[..k].contains(url) {
                return bad(format!(
                    "--store {url} is given twice: each shard is a different store"
                ));
            }
        }
        match kind {
            Some(kind) => Ok((kind, watch)),
            None => bad("no --store: give one store per shard".into()),
        }
    }
}

/// Runs `gdid agent`.
pub async fn run(args: AgentArgs) -> Result<(), AgentFailure> {
    let (kind, watch) = args.check()?;
    let sequences: Vec<&str> = args.sequences.iter().map(String::as_str).collect();
    match kind {
        Kind::Sql => {
            let agent = agent(&args, |store| match store {
                Store::Sql(store) => Some(store),
                _ => None,
            })
            .await?;
            supply(&agent, &args, &sequences, watch).await
        }
        Kind::Mongo => {
            let agent = agent(&args, |store| match store {
                Store::Mongo(database) => Some(MongoWindowShard::new(&database)),
                _ => None,
            })
            .await?;
            supply(&agent, &args, &sequences, watch).await
        }
    }
}

/// The agent over every store, each a shard labelled by its URL (without the password) and
/// prepared (its tables or collections created if missing).
async fn agent<S: WindowShard>(
    args: &AgentArgs,
    shard: impl Fn(Store) -> Option<S>,
) -> Result<WindowAgent<S>, AgentFailure> {
    // The window size is checked before any store is connected to.
    let mut agent = WindowAgent::new(args.window_size, args.min_open_windows)?;
    for url in &args.stores {
        let store = shard(url.connect().await?).ok_or_else(|| {
            AgentFailure::BadInput(format!("--store {url}: not a store the agent can supply"))
        })?;
        agent.add_shard(&url.to_string(), store).await?;
    }
    Ok(agent)
}

/// One round, or (`--watch`) a round every period until Ctrl-C.
async fn supply<S: WindowShard>(
    agent: &WindowAgent<S>,
    args: &AgentArgs,
    sequences: &[&str],
    watch: Option<Duration>,
) -> Result<(), AgentFailure> {
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
    match report.created.len() {
        0 if sequences.is_empty() && !any_sequence(agent).await => {
            "opened no window: no sequence on the shards yet (name one with --sequence)".into()
        }
        0 => format!(
            "opened no window: every shard has {} open window(s) of each sequence",
            args.min_open_windows
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
fn write_report(report: &AgentReport, summary: &str) -> Result<(), AgentFailure> {
    let mut out = io::stdout().lock();
    for (sequence, shard, window) in &report.created {
        writeln!(out, "{shard} {sequence} {}..{}", window.start, window.end)?;
    }
    writeln!(out, "{summary}")?;
    out.flush()?;
    Ok(())
}
