//! The fault suite: ids are never repeated, and a store outage shorter than the cover time is
//! invisible to callers. Each scenario drives real servers (or real `gdid` processes) on
//! 127.0.0.1 and returns a [`Row`] of what happened; the tests assert on the rows, and
//! `cargo run -p gdid-faults --release` prints them as the table of docs/benchmarks/faults.md.

mod calls;
pub mod corrupt;
mod error;
pub mod load;
pub mod netns;
pub mod partition;
pub mod planted;
pub mod proxy;
mod row;
pub mod scenarios;
pub mod server;
pub mod store;
pub mod url;

pub use error::SetupError;

/// The private server of `engine` of this test binary's [`PrivateServers`](server::PrivateServers),
/// started with the others by the first test that asks (and removed when the binary ends);
/// `None`, said skipped, when it is not installed here (a failure with `CI=true`). Each use is
/// counted for the store (`gdid_testkit::ran`).
///
/// # Panics
///
/// When an installed server does not start.
pub fn private_server(engine: server::Engine) -> Option<server::Server> {
    static SERVERS: std::sync::OnceLock<server::PrivateServers> = std::sync::OnceLock::new();
    let servers = SERVERS.get_or_init(|| {
        server::PrivateServers::start()
            .unwrap_or_else(|e| panic!("starting the private servers: {e}"))
    });
    match servers.get(engine) {
        Ok(server) => {
            gdid_testkit::ran(engine.name());
            Some(server.clone())
        }
        Err(why) => {
            gdid_testkit::unavailable(engine.name(), why);
            None
        }
    }
}
pub use proxy::FaultProxy;
pub use row::{Outcome, Row, Timing, duplicates};

/// The `gdid` binary of this build: `GDID_BIN`, or `gdid` in the target folder of the running
/// executable (`target/<profile>/` for a binary, `target/<profile>/deps/` for a test).
///
/// # Errors
///
/// When it is not there: build it first (`cargo build -p gdid-cli`).
pub fn gdid_binary() -> Result<std::path::PathBuf, String> {
    if let Ok(path) = std::env::var("GDID_BIN") {
        return Ok(path.into());
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join("gdid"))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| {
            format!(
                "no gdid binary near {}: build it (cargo build -p gdid-cli) or set GDID_BIN",
                exe.display()
            )
        })
}
