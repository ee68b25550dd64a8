//! [`Server`]: the machine's database servers, stopped and started for real by the suite.

use std::net::TcpStream;
use std::process::Command;
use std::time::{Duration, Instant};

/// A local database server the suite may stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Server {
    /// MariaDB on 127.0.0.1:3306 (`mariadbd`).
    MariaDb,
    /// PostgreSQL on 127.0.0.1:5432 (the first cluster `pg_lsclusters` lists).
    Postgres,
    /// The MongoDB-protocol test server of `scripts/mongodb-test-server.sh`, on 127.0.0.1 at
    /// `GDID_MONGODB_PORT` (27018 by default).
    MongoDb,
}

impl Server {
    fn port(self) -> u16 {
        match self {
            Server::MariaDb => 3306,
            Server::Postgres => 5432,
            Server::MongoDb => std::env::var("GDID_MONGODB_PORT")
                .ok()
                .and_then(|port| port.parse().ok())
                .unwrap_or(27018),
        }
    }

    /// The shell command that starts (or stops) the server.
    fn shell(self, start: bool) -> String {
        let verb = if start { "start" } else { "stop" };
        match self {
            Server::MariaDb if start => {
                "start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd".into()
            }
            Server::MariaDb => {
                "start-stop-daemon --stop --quiet --oknodo --retry 30 --exec /usr/sbin/mariadbd"
                    .into()
            }
            Server::Postgres => format!(
                "pg_ctlcluster --skip-systemctl-redirect $(ls /etc/postgresql | head -n1) main {verb} {}",
                if start { "" } else { "-m fast" }
            ),
            // `start` prints the server's URI.
            Server::MongoDb => format!(
                "{}/../scripts/mongodb-test-server.sh {verb} >/dev/null",
                env!("CARGO_MANIFEST_DIR")
            ),
        }
    }

    fn listening(self) -> bool {
        TcpStream::connect(("127.0.0.1", self.port())).is_ok()
    }

    /// Stops the server and waits until its port is closed.
    ///
    /// # Errors
    ///
    /// When the command fails or the port stays open for 30 s.
    pub fn stop(self) -> Result<ServerStopped, String> {
        run(&self.shell(false))?;
        wait(|| !self.listening(), "to stop")?;
        Ok(ServerStopped(self))
    }
}

/// A stopped server: started again when dropped, whatever happened meanwhile.
#[derive(Debug)]
#[must_use = "the server starts again when this is dropped"]
pub struct ServerStopped(Server);

impl ServerStopped {
    /// Starts the server and waits until it accepts connections.
    ///
    /// # Errors
    ///
    /// When the command fails or the port stays closed for 30 s.
    pub fn start(self) -> Result<(), String> {
        let server = self.0;
        std::mem::forget(self);
        run(&server.shell(true))?;
        wait(|| server.listening(), "to start")
    }
}

impl Drop for ServerStopped {
    fn drop(&mut self) {
        if let Err(e) =
            run(&self.0.shell(true)).and_then(|()| wait(|| self.0.listening(), "to start"))
        {
            eprintln!("gdid-faults: could not start {:?} again: {e}", self.0);
        }
    }
}

fn run(shell: &str) -> Result<(), String> {
    let status = Command::new("bash")
        .args(["-c", shell])
        .status()
        .map_err(|e| format!("{shell}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{shell}: {status}"))
    }
}

fn wait(done: impl Fn() -> bool, what: &str) -> Result<(), String> {
    let started = Instant::now();
    while !done() {
        if started.elapsed() > Duration::from_secs(30) {
            return Err(format!("the server took more than 30 s {what}"));
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    Ok(())
}
