//! [`Server`]: one of the suite's private database servers ([`PrivateServers`]), stopped and
//! started for real by the scenarios. The machine's own servers are never touched
//! ([`machine_servers`] lists them, so that a test can check they kept running).

mod engine;
mod machine;
mod private;
mod replication;

use std::fs::OpenOptions;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use std::os::unix::process::CommandExt;

pub use engine::Engine;
pub use machine::{machine_servers, machine_servers_to_keep};
pub use private::PrivateServers;
pub use replication::{MariaDbReplicas, PostgresReplicas};

use engine::{Launch, tail};

/// A private server of the suite: a process it started, with a data folder, a port and a socket
/// of its own. Clones are handles to the same server; the last one dropped stops it.
#[derive(Debug, Clone)]
pub struct Server(Arc<Instance>);

#[derive(Debug)]
struct Instance {
    engine: Engine,
    folder: PathBuf,
    port: u16,
    launch: Launch,
    /// The running process, `None` while stopped.
    process: Mutex<Option<Child>>,
}

/// How long a server may take to start or to stop before it is an error (a stop then kills it).
const PATIENCE: Duration = Duration::from_secs(60);

impl Server {
    /// Starts `engine` as `launch` says, in `folder`, and waits until it accepts connections on
    /// 127.0.0.1:`port`.
    fn start(engine: Engine, folder: PathBuf, port: u16, launch: Launch) -> Result<Server, String> {
        let server = Server(Arc::new(Instance {
            engine,
            folder,
            port,
            launch,
            process: Mutex::new(None),
        }));
        server.spawn()?;
        Ok(server)
    }

    /// Which database it is.
    pub fn engine(&self) -> Engine {
        self.0.engine
    }

    /// The URL clients connect to.
    pub fn url(&self) -> &str {
        &self.0.launch.url
    }

    /// Stops the server (its process, with the engine's clean-shutdown signal) and waits until
    /// it is gone.
    ///
    /// # Errors
    ///
    /// When it is not running, or had to be killed.
    pub fn stop(&self) -> Result<ServerStopped, String> {
        let child = self.0.process().take().ok_or("the server is not running")?;
        self.0.halt(child)?;
        Ok(ServerStopped(Some(self.clone())))
    }

    /// Starts the process and waits for its port; records its id for the clean-up
    /// (`server.pid` in its folder: the id and the signal that stops it).
    fn spawn(&self) -> Result<(), String> {
        let instance = &self.0;
        let mut process = instance.process();
        if process.is_some() {
            return Err("the server is running already".into());
        }
        let log_path = instance.folder.join("server.log");
        let log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(&log_path)
            .map_err(|e| format!("{}: {e}", log_path.display()))?;
        let mut child = Command::new(&instance.launch.program)
            .args(&instance.launch.args)
            .stdin(Stdio::null())
            .stdout(log.try_clone().map_err(|e| e.to_string())?)
            .stderr(log)
            // Its own process group: a Ctrl-C at the terminal stops the suite, and the suite's
            // clean-up stops the server.
            .process_group(0)
            .spawn()
            .map_err(|e| format!("{}: {e}", instance.launch.program.display()))?;
        let pid_file = instance.folder.join("server.pid");
        std::fs::write(
            &pid_file,
            format!("{} {}\n", child.id(), instance.engine.stop_signal()),
        )
        .map_err(|e| format!("{}: {e}", pid_file.display()))?;
        let started = Instant::now();
        while !instance.engine.serves(instance.port) {
            let exited = child.try_wait().map_err(|e| e.to_string())?;
            if exited.is_some() || started.elapsed() > PATIENCE {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} did not start on 127.0.0.1:{} ({}); {}",
                    instance.engine.name(),
                    instance.port,
                    exited.map_or_else(|| "still closed after 60 s".into(), |s| s.to_string()),
                    tail(&log_path)
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        *process = Some(child);
        Ok(())
    }
}

impl Instance {
    fn process(&self) -> MutexGuard<'_, Option<Child>> {
        self.process.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends `child` the engine's stop signal and waits for it to exit; kills it after
    /// [`PATIENCE`].
    fn halt(&self, mut child: Child) -> Result<(), String> {
        let signal = self.engine.stop_signal();
        let _ = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status();
        let asked = Instant::now();
        while child.try_wait().map_err(|e| e.to_string())?.is_none() {
            if asked.elapsed() > PATIENCE {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{} did not stop within 60 s of SIG{signal}: killed; {}",
                    self.engine.name(),
                    tail(&self.folder.join("server.log"))
                ));
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(())
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        if let Some(child) = self.process().take()
            && let Err(e) = self.halt(child)
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
