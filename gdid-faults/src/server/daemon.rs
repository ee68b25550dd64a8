//! [`Daemon`]: one database server process of the suite, started in a folder of its own and
//! waited for on its port, stopped with its engine's signal and waited for: what the private
//! servers ([`Server`](super::Server)) and the replicated ones share.

use std::fs::OpenOptions;
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::engine::{Engine, Launch, Programs, RunAs, free_port, make_folder, tail};

/// How long a server may take to start or to stop (or, for the replicas, to be promoted or to
/// catch up) before it is an error (a stop then kills it).
pub(crate) const PATIENCE: Duration = Duration::from_secs(60);

/// How often a wait looks again.
pub(crate) const POLL: Duration = Duration::from_millis(50);

/// A server to run: its engine, its folder (data, socket, `server.log`, `server.pid`), its port
/// and how to start it.
#[derive(Debug)]
pub(crate) struct Daemon {
    pub(crate) engine: Engine,
    /// Its name in messages: `MariaDB`, `PostgreSQL standby 1`.
    pub(crate) name: String,
    pub(crate) folder: PathBuf,
    pub(crate) port: u16,
    pub(crate) launch: Launch,
}

impl Daemon {
    /// A new instance of `programs`' engine named `name`, in `folder` (made here), on a free
    /// port: its data folder made ([`Programs::init`]), not started.
    pub(crate) fn init(
        programs: &Programs,
        name: impl Into<String>,
        folder: PathBuf,
        run_as: RunAs,
    ) -> Result<Daemon, String> {
        make_folder(&folder)?;
        let port = free_port()?;
        let launch = programs.init(&folder, port, run_as)?;
        Ok(Daemon {
            engine: programs.engine(),
            name: name.into(),
            folder,
            port,
            launch,
        })
    }

    /// Starts the process, in a process group of its own, its output appended to `server.log`,
    /// and waits until it serves clients on its port. Records its id for the clean-up
    /// (`server.pid` in its folder: the id and the signal that stops it).
    pub(crate) fn spawn(&self) -> Result<Child, String> {
        let log_path = self.folder.join("server.log");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("{}: {e}", log_path.display()))?;
        let mut child = Command::new(&self.launch.program)
            .args(&self.launch.args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            // Its own process group: a Ctrl-C at the terminal stops the suite, and the suite's
            // clean-up stops the server.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("{}: {e}", self.launch.program.display()))?;
        let pid_file = self.folder.join("server.pid");
        std::fs::write(
            &pid_file,
            format!("{} {}\n", child.id(), self.engine.stop_signal()),
        )
        .map_err(|e| format!("{}: {e}", pid_file.display()))?;
        let started = Instant::now();
        while !self.engine.serves(self.port) {
            let exited = child.try_wait().map_err(|e| e.to_string())?;
            if exited.is_some() || started.elapsed() > PATIENCE {
                kill_group(&mut child);
                return Err(format!(
                    "{} did not start on 127.0.0.1:{} ({}); {}",
                    self.name,
                    self.port,
                    exited.map_or_else(|| "still closed after 60 s".into(), |s| s.to_string()),
                    tail(&log_path)
                ));
            }
            std::thread::sleep(POLL);
        }
        Ok(child)
    }

    /// Stops `child`, its process, cleanly (the engine's stop signal: PostgreSQL's fast
    /// shutdown, SIGTERM for the others) and waits until it is gone; kills it after
    /// [`PATIENCE`].
    pub(crate) fn halt(&self, mut child: Child) -> Result<(), String> {
        let signal = self.engine.stop_signal();
        let _ = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status();
        let asked = Instant::now();
        while child.try_wait().map_err(|e| e.to_string())?.is_none() {
            if asked.elapsed() > PATIENCE {
                kill_group(&mut child);
                return Err(format!(
                    "{} did not stop within 60 s of SIG{signal}: killed; {}",
                    self.name,
                    tail(&self.folder.join("server.log"))
                ));
            }
            std::thread::sleep(POLL);
        }
        Ok(())
    }
}

/// SIGKILL to `child`'s process group (it leads one of its own: a PostgreSQL server's backends
/// go with it), then waits for it and, for at most 5 s, until no process of the group is left: a
/// backend that outlived its postmaster for a moment would look like a machine's server (its
/// parent is init, its command line names no folder) to a check that runs next.
pub(crate) fn kill_group(child: &mut Child) {
    let group = format!("-{}", child.id());
    let _ = Command::new("kill")
        .args(["-KILL", "--", &group])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(5) {
        let alive = Command::new("kill")
            .args(["-0", "--", &group])
            .stderr(Stdio::null())
            .status();
        if !alive.is_ok_and(|status| status.success()) {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `command` to its end and returns its standard output, trimmed; `Err` with its standard
/// error when it fails.
pub(super) fn output(command: &mut Command) -> Result<String, String> {
    let result = command
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("{command:?}: {e}"))?;
    if result.status.success() {
        Ok(String::from_utf8_lossy(&result.stdout).trim().to_owned())
    } else {
        Err(format!(
            "{command:?}: {}: {}",
            result.status,
            last_lines(&[&result.stdout, &result.stderr])
        ))
    }
}

/// The last 15 non-empty lines of `outputs` (a program's standard output, then its standard
/// error), for a message.
pub(super) fn last_lines(outputs: &[&[u8]]) -> String {
    let text: String = outputs
        .iter()
        .map(|output| String::from_utf8_lossy(output))
        .collect::<Vec<_>>()
        .join("\n");
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    lines[lines.len().saturating_sub(15)..].join("\n")
}

/// Asks `check` every [`POLL`] until it says `Some`, for at most [`PATIENCE`]; `Err` says
/// `what` did not happen, and the last thing `check` said.
pub(super) fn wait_for<T>(
    what: &str,
    mut check: impl FnMut() -> Result<Option<T>, String>,
) -> Result<T, String> {
    let started = Instant::now();
    let mut last = String::new();
    loop {
        match check() {
            Ok(Some(value)) => return Ok(value),
            Ok(None) => {}
            Err(e) => last = e,
        }
        if started.elapsed() > PATIENCE {
            return Err(format!("{what}: not within {PATIENCE:?} ({last})"));
        }
        std::thread::sleep(POLL);
    }
}
