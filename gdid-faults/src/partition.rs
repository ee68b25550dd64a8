//! The client of the partition tests: one long-lived generator over several `gdid serve`
//! authorities, as a service holds one, taking ids without pause and printing each with the
//! time it got it, so that a test on the other side of a cut link can tell when ids stopped,
//! from which authority they came again, and whether any came twice.
//!
//! `gdid-faults partition-client TOKEN SEQUENCE URL…` runs it (in a network namespace, under
//! `ip netns exec`) until it is killed; `gdid-faults partition-relay ADDRESS…` runs [`relay`],
//! through which it reaches the servers. Each line of its standard output is `MS ID`, or
//! `MS error MESSAGE` for a call that failed, MS being the Unix time in milliseconds (one
//! machine, one clock: comparable with the test's).

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gdid::Store;

use crate::{FaultProxy, SetupError};

/// The scope of the partition tests' sequences.
pub const SCOPE: &str = "partition";

/// The generator's blocks: small, so that it goes back to its authorities about ten times a
/// second and every fault is met by a refill, not hidden behind a large block in hand.
pub const BLOCK: u64 = 100;

/// The pause between two ids.
const PACE: Duration = Duration::from_millis(1);

/// The Unix time in milliseconds.
pub fn unix_ms() -> u128 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_millis())
}

/// Takes ids of `sequence` from the `gdid serve` servers at `urls` (in preference order, with
/// the bearer `token`) until the process is killed, writing a line to `out` for each call.
///
/// # Errors
///
/// When the stores cannot be opened, or `out` cannot be written.
pub async fn client(
    token: &str,
    sequence: &str,
    urls: &[String],
    out: &mut impl Write,
) -> Result<(), SetupError> {
    let stores = Store::options().http_token(token).open_all(urls).await?;
    let ids = stores
        .block_generator(SCOPE, sequence)
        .fixed_block_size(BLOCK)
        .build()?;
    loop {
        match ids.next_id().await {
            Ok(id) => writeln!(out, "{} {id}", unix_ms())?,
            Err(e) => writeln!(out, "{} error {e}", unix_ms())?,
        }
        out.flush()?;
        tokio::time::sleep(PACE).await;
    }
}

/// The relay of the partition tests, run in the client's namespace: a [`FaultProxy`] to each
/// of `targets` (the servers), their addresses written to `out` one a line (the client is given
/// those), then commands read from `input` until it ends, each applied to every relay:
/// `degrade MS PERCENT` (MS of latency each way, PERCENT of chunks held back as lost segments
/// are) and `clear`. It stands in for `tc netem`, which not every kernel has.
///
/// # Errors
///
/// When a relay cannot listen, a command is not one of those, or `out` cannot be written.
pub fn relay(
    runtime: &tokio::runtime::Runtime,
    targets: &[String],
    input: impl std::io::BufRead,
    out: &mut impl Write,
) -> Result<(), SetupError> {
    let mut relays = Vec::with_capacity(targets.len());
    for target in targets {
        let relay = runtime.block_on(FaultProxy::start(target.parse()?))?;
        writeln!(out, "{}", relay.address())?;
        relays.push(relay);
    }
    out.flush()?;
    for line in input.lines() {
        let line = line?;
        let (latency, loss) = match line.split_whitespace().collect::<Vec<_>>()[..] {
            ["degrade", ms, percent] => (Duration::from_millis(ms.parse()?), percent.parse()?),
            ["clear"] => (Duration::ZERO, 0),
            _ => return Err(format!("relay: no such command: {line:?}").into()),
        };
        for relay in &relays {
            relay.set_latency(latency);
            relay.set_loss(loss);
        }
        writeln!(out, "ok")?;
        out.flush()?;
    }
    Ok(())
}
