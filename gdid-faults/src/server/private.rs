//! [`PrivateServers`]: the suite's own MariaDB, PostgreSQL and MongoDB test server, each with a
//! data folder, a port and a socket of its own under one folder per run, so that stopping them
//! stops nothing anyone else uses.
//!
//! Made once per run (about 5 s, the three in parallel) and removed at the end: by [`Drop`], and,
//! however the process ends (a panic in a test, SIGKILL), by a clean-up process waiting for the
//! suite's end on a pipe (`reap.sh`). A run starts by removing what a run whose clean-up was
//! killed too left behind.

use std::io::ErrorKind;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use super::Server;
use super::daemon::Daemon;
use super::engine::{Engine, RunAs, make_folder};

/// The clean-up: stops the servers of a run's folder and removes it.
const REAP: &str = include_str!("reap.sh");

/// The suite's private servers, one per engine installed here.
#[derive(Debug)]
pub struct PrivateServers {
    run: RunFolder,
    servers: Vec<Server>,
    /// The engines not installed here, and why.
    missing: Vec<(Engine, String)>,
}

impl PrivateServers {
    /// The folder every run's folder is made in: `gdid-faults-servers` in the temporary folder.
    pub fn root() -> PathBuf {
        std::env::temp_dir().join("gdid-faults-servers")
    }

    /// Starts a private server of every engine installed here, in parallel, in a new folder
    /// under [`PrivateServers::root`], after removing what earlier runs left there.
    ///
    /// # Errors
    ///
    /// When the folder cannot be made, or an installed engine fails to start (the message ends
    /// with its log).
    pub fn start() -> Result<PrivateServers, String> {
        let run = RunFolder::make(&PrivateServers::root())?;
        let run_as = RunAs::here();
        let started: Vec<(Engine, Result<Started, String>)> = std::thread::scope(|scope| {
            let threads: Vec<_> = Engine::ALL
                .map(|engine| {
                    let folder = run.path();
                    (engine, scope.spawn(move || start(engine, folder, run_as)))
                })
                .into_iter()
                .collect();
            threads
                .into_iter()
                .map(|(engine, thread)| {
                    let result = thread
                        .join()
                        .unwrap_or_else(|_| Err("the start panicked".into()));
                    (engine, result)
                })
                .collect()
        });
        let mut servers = PrivateServers {
            run,
            servers: Vec::new(),
            missing: Vec::new(),
        };
        let mut failed = Vec::new();
        for (engine, result) in started {
            match result {
                Ok(Started::Running(server)) => servers.servers.push(server),
                Ok(Started::NotInstalled(why)) => servers.missing.push((engine, why)),
                Err(e) => failed.push(format!("{}: {e}", engine.name())),
            }
        }
        if failed.is_empty() {
            Ok(servers)
        } else {
            Err(failed.join("\n"))
        }
    }

    /// The private server of `engine`; `Err` says why this machine has none (not installed).
    ///
    /// # Errors
    ///
    /// When the engine is not installed here.
    pub fn get(&self, engine: Engine) -> Result<&Server, &str> {
        if let Some(server) = self.servers.iter().find(|s| s.engine() == engine) {
            return Ok(server);
        }
        Err(self
            .missing
            .iter()
            .find(|(missing, _)| *missing == engine)
            .map_or("not started", |(_, why)| why.as_str()))
    }

    /// The run's folder: every server's data, socket and log.
    pub fn folder(&self) -> &Path {
        self.run.path()
    }
}

impl Drop for PrivateServers {
    fn drop(&mut self) {
        self.servers.clear(); // each stops, unless a clone outlives this
        // Then the run's folder is dropped: its clean-up stops what is left, removes the folder.
    }
}

/// What [`start`] did with an engine.
enum Started {
    Running(Server),
    /// Why not.
    NotInstalled(String),
}

/// Starts `engine` in its folder in `run`.
fn start(engine: Engine, run: &Path, run_as: RunAs) -> Result<Started, String> {
    let programs = match engine.find() {
        Ok(programs) => programs,
        Err(why) => return Ok(Started::NotInstalled(why)),
    };
    let daemon = Daemon::init(&programs, engine.name(), run.join(engine.folder()), run_as)?;
    Server::start(daemon).map(Started::Running)
}

/// A run's folder, `run-PID` in a root folder, with its clean-up process: the servers of the
/// folder are stopped and the folder removed when this is dropped, or when the process ends
/// however it ends (the clean-up acts when its stdin, held here, closes).
#[derive(Debug)]
pub(super) struct RunFolder {
    folder: PathBuf,
    cleanup: Child,
}

impl RunFolder {
    /// Makes `run-PID` in `root` and starts its clean-up, after removing what runs that are gone
    /// left in `root` (runs killed with their clean-up, or on a machine stopped mid-run).
    pub(super) fn make(root: &Path) -> Result<RunFolder, String> {
        make_folder(root)?;
        remove_leftovers(root);
        let folder = root.join(format!("run-{}", std::process::id()));
        if folder.exists() {
            reap_now(&folder); // a killed run's, whose process id this one got
        }
        make_folder(&folder)?;
        let cleanup = Command::new("bash")
            .args(["-c", REAP, "reap", "on-eof"])
            .arg(&folder)
            .stdin(Stdio::piped())
            .process_group(0)
            .spawn()
            .map_err(|e| format!("starting the clean-up of {}: {e}", folder.display()))?;
        Ok(RunFolder { folder, cleanup })
    }

    /// The folder.
    pub(super) fn path(&self) -> &Path {
        &self.folder
    }
}

impl Drop for RunFolder {
    fn drop(&mut self) {
        drop(self.cleanup.stdin.take()); // the clean-up stops what is left, removes the folder
        let _ = self.cleanup.wait();
    }
}

/// Cleans up every run's folder in `root` whose process is gone (and whose clean-up process was
/// killed with it, or never ran: a machine stopped mid-run).
fn remove_leftovers(root: &Path) {
    let entries = match std::fs::read_dir(root) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return,
        Err(e) => {
            eprintln!("gdid-faults: {}: {e}", root.display());
            return;
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|n| n.strip_prefix("run-")) else {
            continue;
        };
        if pid.parse::<u32>().is_ok() && !Path::new("/proc").join(pid).exists() {
            reap_now(&entry.path());
        }
    }
}

/// Stops the servers of the run folder `folder` and removes it, now.
fn reap_now(folder: &Path) {
    let status = Command::new("bash")
        .args(["-c", REAP, "reap", "now"])
        .arg(folder)
        .stdin(Stdio::null())
        .status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!("gdid-faults: could not clean up {}", folder.display());
    }
}
