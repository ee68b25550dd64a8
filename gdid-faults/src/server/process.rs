//! [`Process`]: one server of a set the suite starts (a replica set, a Galera cluster), up or
//! down, and what such a set shares: the run's folder of its kind, a name for each set, and its
//! servers found by number.

use std::io::ErrorKind;
use std::path::Path;
use std::process::Child;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

use super::PrivateServers;
use super::daemon::{Daemon, kill_group};
use super::private::RunFolder;

/// A [`Daemon`] (folder, port, launch) and its process while it runs. Dropped, it is killed with
/// its whole process group and its folder is removed.
#[derive(Debug)]
pub(crate) struct Process {
    pub(crate) daemon: Daemon,
    /// The running process (the leader of its own process group), `None` while down.
    child: Option<Child>,
}

impl Process {
    /// `daemon`, down.
    pub(crate) fn new(daemon: Daemon) -> Process {
        Process {
            daemon,
            child: None,
        }
    }

    /// `daemon`, started ([`Process::start`]).
    pub(crate) fn started(daemon: Daemon) -> Result<Process, String> {
        let mut process = Process::new(daemon);
        process.start()?;
        Ok(process)
    }

    /// Starts the process and waits until it accepts clients on its port ([`Daemon::spawn`]).
    pub(crate) fn start(&mut self) -> Result<(), String> {
        if self.child.is_some() {
            return Err(format!("{} is running already", self.daemon.name));
        }
        self.child = Some(self.daemon.spawn()?);
        Ok(())
    }

    /// Stops it cleanly and waits until it is gone ([`Daemon::halt`]).
    pub(crate) fn stop(&mut self) -> Result<(), String> {
        let child = self.taken()?;
        self.daemon.halt(child)
    }

    /// Kills it with SIGKILL, the whole process group at once (a PostgreSQL server's backends,
    /// a Galera state transfer's `rsync`), as a crash of its machine would, and waits until it
    /// is gone.
    pub(crate) fn kill(&mut self) -> Result<(), String> {
        kill_group(&mut self.taken()?);
        Ok(())
    }

    /// Whether it was started and not stopped or killed here (it may have exited by itself
    /// since: [`Process::is_running`] looks).
    pub(crate) fn was_started(&self) -> bool {
        self.child.is_some()
    }

    /// Whether its process runs (one that exited by itself is reaped and counted as down).
    pub(crate) fn is_running(&mut self) -> bool {
        match self.child.as_mut().map(Child::try_wait) {
            Some(Ok(None)) => true,
            Some(_) => {
                self.child = None;
                false
            }
            None => false,
        }
    }

    /// Its process, taken: it is down from now on as far as this knows.
    fn taken(&mut self) -> Result<Child, String> {
        self.child
            .take()
            .ok_or_else(|| format!("{} is not running", self.daemon.name))
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            kill_group(&mut child);
        }
        let folder = &self.daemon.folder;
        if let Err(e) = std::fs::remove_dir_all(folder)
            && e.kind() != ErrorKind::NotFound
        {
            eprintln!("gdid-faults: {}: {e}", folder.display());
        }
    }
}

/// This process's folder of sets of `kind` (`galera`, `replication`), `KIND/run-PID` under
/// [`PrivateServers::root`], made in `run` (and what killed runs left behind removed) on first
/// use; its clean-up removes it when the process ends (`run` is a static: never dropped, the
/// folder's clean-up holds on until then).
pub(crate) fn run_folder(
    run: &'static OnceLock<Result<RunFolder, String>>,
    kind: &str,
) -> Result<&'static Path, String> {
    run.get_or_init(|| RunFolder::make(&PrivateServers::root().join(kind)))
        .as_ref()
        .map(RunFolder::path)
        .map_err(Clone::clone)
}

/// A new name for a set in its run's folder, `word` and the next number of `sets`: `galera1`,
/// `pg2`, ….
pub(crate) fn set_name(word: &str, sets: &AtomicU32) -> String {
    format!("{word}{}", sets.fetch_add(1, Ordering::Relaxed) + 1)
}

/// `i` when a set of `count` members has a member `i`, or says there is none: `no node 3: the
/// cluster has 3`.
pub(crate) fn member(count: usize, i: usize, (member, set): (&str, &str)) -> Result<usize, String> {
    if i < count {
        Ok(i)
    } else {
        Err(format!("no {member} {i}: the {set} has {count}"))
    }
}
