//! [`Server`]: one of the suite's private database servers ([`PrivateServers`]), stopped and
//! started for real by the scenarios. The machine's own servers are never touched
//! ([`machine_servers`] lists them, so that a test can check they kept running).

mod daemon;
mod engine;
mod galera;
mod machine;
mod private;
mod process;
mod replication;

use std::process::Child;
use std::sync::{Arc, Mutex, MutexGuard};

pub use engine::Engine;
pub use galera::GaleraCluster;
pub use machine::{machine_servers, machine_servers_to_keep};
pub use private::PrivateServers;
pub use replication::{MariaDb, MariaDbReplicas, Postgres, PostgresReplicas, Replicas};

use daemon::Daemon;

/// A private server of the suite: a process it started, with a data folder, a port and a socket
/// of its own. Clones are handles to the same server; the last one dropped stops it.
#[derive(Debug, Clone)]
pub struct Server(Arc<Instance>);

#[derive(Debug)]
struct Instance {
    daemon: Daemon,
    /// The running process, `None` while stopped.
    process: Mutex<Option<Child>>,
}

impl Server {
    /// Starts `daemon` and waits until it accepts connections on its port.
    fn start(daemon: Daemon) -> Result<Server, String> {
        let server = Server(Arc::new(Instance {
            daemon,
            process: Mutex::new(None),
        }));
        server.spawn()?;
        Ok(server)
    }

    /// Which database it is.
    pub fn engine(&self) -> Engine {
        self.0.daemon.engine
    }

    /// The URL clients connect to.
    pub fn url(&self) -> &str {
        &self.0.daemon.launch.url
    }

    /// Its log: what the process printed, appended across its restarts.
    pub fn log(&self) -> std::path::PathBuf {
        self.0.daemon.folder.join("server.log")
    }

    /// Stops the server (its process, with the engine's clean-shutdown signal) and waits until
    /// it is gone.
    ///
    /// # Errors
    ///
    /// When it is not running, or had to be killed.
    pub fn stop(&self) -> Result<ServerStopped, String> {
        let child = self.0.process().take().ok_or("the server is not running")?;
        self.0.daemon.halt(child)?;
        Ok(ServerStopped(Some(self.clone())))
    }

    /// Starts the process and waits for its port ([`Daemon::spawn`]).
    fn spawn(&self) -> Result<(), String> {
        let mut process = self.0.process();
        if process.is_some() {
            return Err("the server is running already".into());
        }
        *process = Some(self.0.daemon.spawn()?);
        Ok(())
    }
}

impl Instance {
    fn process(&self) -> MutexGuard<'_, Option<Child>> {
        self.process.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(child) = self.process().take()
            && let Err(e) = self.daemon.halt(child)
        {
            eprintln!("gdid-faults: {e}");
        }
    }
}

/// A stopped server: started again when dropped, whatever happened meanwhile.
#[derive(Debug)]
#[must_use = "the server starts again when this is dropped"]
pub struct ServerStopped(Option<Server>);

impl ServerStopped {
    /// Starts the server again, on the same port and data, and waits until it accepts
    /// connections.
    ///
    /// # Errors
    ///
    /// When it does not start within 60 s.
    pub fn start(mut self) -> Result<(), String> {
        self.0.take().map_or(Ok(()), |server| server.spawn())
    }
}

impl Drop for ServerStopped {
    fn drop(&mut self) {
        if let Some(server) = self.0.take()
            && let Err(e) = server.spawn()
        {
            eprintln!(
                "gdid-faults: could not start {} again: {e}",
                server.engine().name()
            );
        }
    }
}
