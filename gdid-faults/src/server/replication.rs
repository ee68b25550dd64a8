//! Replicated private servers, for failover: a PostgreSQL primary with asynchronous streaming
//! standbys ([`PostgresReplicas`], a chain too), and a MariaDB primary with a replica
//! ([`MariaDbReplicas`]). Each server can be stopped cleanly (it lags), started again, killed
//! (SIGKILL, as a crash), and promoted, as an operator or a failover manager would.
//!
//! Like the private servers ([`PrivateServers`]) they run as the engines' service users when the
//! suite runs as root, never on the machine's own ports, and live in folders of their own: one
//! per process, `replication/run-PID` under [`PrivateServers::root`], one folder per server in
//! it. A set's servers are killed (their whole process group) and their folders removed when it
//! is dropped, also after a panic; a clean-up process (`reap.sh`, as for the private servers)
//! stops what is left and removes the run's folder when the process ends however it ends; and
//! the first set of a run removes what runs killed with their clean-up left behind.
//!
//! Every call here blocks (it runs the engines' programs and their command-line clients, `psql`
//! and `mariadb`): call it from a test's own thread, or from `spawn_blocking`.

use std::ffi::OsString;
use std::fs::OpenOptions;
use std::io::ErrorKind;
use std::net::{SocketAddr, TcpListener};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use super::PrivateServers;
use super::engine::{Engine, Launch, Programs, RunAs, tail};

/// The clean-up of a run's folder (the private servers' own).
const REAP: &str = include_str!("reap.sh");

/// How long a server may take to start, stop, promote or catch up before it is an error.
const PATIENCE: Duration = Duration::from_secs(60);

/// How often a wait looks again.
const POLL: Duration = Duration::from_millis(50);

// ----------------------------------------------------------------------------------------------
// The run's folder and its clean-up
// ----------------------------------------------------------------------------------------------

/// This process's folder of replicated servers, with the clean-up process that removes it when
/// the process ends (it acts when its stdin, held here for the life of the process, closes).
#[derive(Debug)]
struct RunFolder {
    folder: PathBuf,
    /// Never used, only held: its stdin closes when this process ends, however it ends.
    _cleanup: Child,
}

/// This process's folder of replicated servers, made (and what killed runs left behind removed)
/// on first use.
fn run_folder() -> Result<&'static Path, String> {
    static RUN: OnceLock<Result<RunFolder, String>> = OnceLock::new();
    RUN.get_or_init(RunFolder::make)
        .as_ref()
        .map(|run| run.folder.as_path())
        .map_err(Clone::clone)
}

impl RunFolder {
    /// Makes `replication/run-PID` under [`PrivateServers::root`] and starts its clean-up, after
    /// removing the folders of runs that are gone.
    fn make() -> Result<RunFolder, String> {
        let root = PrivateServers::root().join("replication");
        make_folder(&root)?;
        remove_leftovers(&root);
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
        Ok(RunFolder {
            folder,
            _cleanup: cleanup,
        })
    }
}

/// Cleans up every `run-PID` folder in `root` whose process is gone.
fn remove_leftovers(root: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
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

/// A new name for a set of servers in this process's run folder: `pg1`, `mariadb2`, ….
fn set_name(engine: &str) -> String {
    static SETS: AtomicU32 = AtomicU32::new(0);
    format!("{engine}{}", SETS.fetch_add(1, Ordering::Relaxed) + 1)
}

/// Who the servers run as: the engines' service users when this process is root.
fn run_as() -> RunAs {
    if std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
        RunAs::ServiceUsers
    } else {
        RunAs::Me
    }
}

/// Makes `folder` (and its parents), open to the servers' users (`0755`).
fn make_folder(folder: &Path) -> Result<(), String> {
    std::fs::create_dir_all(folder)
        .and_then(|()| std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)))
        .map_err(|e| format!("{}: {e}", folder.display()))
}

/// A port on 127.0.0.1 that nothing listens on now.
fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|e| format!("finding a free port: {e}"))
}

// ----------------------------------------------------------------------------------------------
// Running programs
// ----------------------------------------------------------------------------------------------

/// `program` run as `user` when the servers run as the service users (`setpriv`, which executes
/// it in place, so the process id is the program's), else as it is: the program and the
/// arguments before its own. (The same as the private servers' launch.)
fn as_user(run_as: RunAs, user: &str, program: PathBuf) -> (PathBuf, Vec<OsString>) {
    match run_as {
        RunAs::Me => (program, Vec::new()),
        RunAs::ServiceUsers => (
            PathBuf::from("setpriv"),
            vec![
                format!("--reuid={user}").into(),
                format!("--regid={user}").into(),
                "--init-groups".into(),
                "--".into(),
                program.into_os_string(),
            ],
        ),
    }
}

/// Gives `folder` to `user` (and its group of the same name), when the servers run as the
/// service users.
fn give(run_as: RunAs, user: &str, folder: &Path) -> Result<(), String> {
    if run_as == RunAs::Me {
        return Ok(());
    }
    let mut chown = Command::new("chown");
    chown.arg("-R").arg(format!("{user}:{user}")).arg(folder);
    output(&mut chown).map(drop)
}

/// Runs `command` to its end and returns its standard output, trimmed; `Err` with its standard
/// error when it fails.
fn output(command: &mut Command) -> Result<String, String> {
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
fn last_lines(outputs: &[&[u8]]) -> String {
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
fn wait_for<T>(
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

// ----------------------------------------------------------------------------------------------
// One server
// ----------------------------------------------------------------------------------------------

/// One server of a set: its folder (data, socket, log), port and process. Dropped, it is killed
/// with its whole process group and its folder is removed.
#[derive(Debug)]
struct Node {
    engine: Engine,
    /// Its role when it was made, for messages: `primary`, `standby 1`.
    role: String,
    folder: PathBuf,
    port: u16,
    launch: Launch,
    /// The running process (the leader of its own process group), `None` while down.
    process: Option<Child>,
}

impl Node {
    /// The address clients connect to.
    fn address(&self) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// Starts the process, in a process group of its own, and waits until it accepts clients
    /// on its port. Records its id for the clean-up (`server.pid`: the id and the signal that
    /// stops it).
    fn start(&mut self) -> Result<(), String> {
        if self.process.is_some() {
            return Err(format!("{} is running already", self.role));
        }
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
                    "{} {} did not start on 127.0.0.1:{} ({}); {}",
                    self.engine.name(),
                    self.role,
                    self.port,
                    exited.map_or_else(|| "still closed after 60 s".into(), |s| s.to_string()),
                    tail(&log_path)
                ));
            }
            std::thread::sleep(POLL);
        }
        self.process = Some(child);
        Ok(())
    }

    /// Stops it cleanly (the engine's stop signal: PostgreSQL's fast shutdown, MariaDB's
    /// SIGTERM) and waits until it is gone; killed after [`PATIENCE`].
    fn stop(&mut self) -> Result<(), String> {
        let mut child = self.running()?;
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
                    "{} {} did not stop within 60 s of SIG{signal}: killed; {}",
                    self.engine.name(),
                    self.role,
                    tail(&self.folder.join("server.log"))
                ));
            }
            std::thread::sleep(POLL);
        }
        Ok(())
    }

    /// Kills it with SIGKILL, the whole process group at once (a PostgreSQL server's backends
    /// with it), as a crash of its machine would, and waits until it is gone.
    fn kill(&mut self) -> Result<(), String> {
        let mut child = self.running()?;
        kill_group(&mut child);
        Ok(())
    }

    /// Its process, taken: it is down from now on as far as this node knows.
    fn running(&mut self) -> Result<Child, String> {
        self.process
            .take()
            .ok_or_else(|| format!("{} {} is not running", self.engine.name(), self.role))
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        if let Some(mut child) = self.process.take() {
            kill_group(&mut child);
        }
        if let Err(e) = std::fs::remove_dir_all(&self.folder)
            && e.kind() != ErrorKind::NotFound
        {
            eprintln!("gdid-faults: {}: {e}", self.folder.display());
        }
    }
}

/// SIGKILL to `child`'s process group (it leads one of its own), then waits for it.
fn kill_group(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", child.id())])
        .stderr(Stdio::null())
        .status();
    let _ = child.kill();
    let _ = child.wait();
}

/// Finds a node by index, or says there is none.
fn node(nodes: &mut [Node], i: usize) -> Result<&mut Node, String> {
    let count = nodes.len();
    nodes
        .get_mut(i)
        .ok_or_else(|| format!("no server {i}: the set has {count}"))
}

// ----------------------------------------------------------------------------------------------
// PostgreSQL
// ----------------------------------------------------------------------------------------------

/// Settings every PostgreSQL server of a set starts with: as many connections on the standbys
/// as on the primary (a hot standby needs at least as many), room for fifty clients' pools, WAL
/// kept for a standby that was stopped a while, and no fsync (the faults here kill processes,
/// never the machine, whose page cache keeps what a killed server wrote).
const POSTGRES_SETTINGS: [&str; 4] = [
    "max_connections=300",
    "wal_keep_size=256MB",
    "fsync=off",
    "listen_addresses=127.0.0.1",
];

/// A PostgreSQL primary (server 0) and standbys replicating from it, or from each other, by
/// asynchronous streaming (`pg_basebackup -R -X stream`), each on its own port. Promoting a
/// standby makes it a primary (a new timeline); the old primary is not fenced: kill it first.
#[derive(Debug)]
pub struct PostgresReplicas {
    name: String,
    bindir: PathBuf,
    run_as: RunAs,
    nodes: Vec<Node>,
    /// Each server's upstream: `None` for a primary.
    upstream: Vec<Option<usize>>,
}

impl PostgresReplicas {
    /// Whether PostgreSQL's programs are installed here: `Err` says which is not.
    ///
    /// # Errors
    ///
    /// When `postgres`, `initdb`, `pg_basebackup`, `psql` or `pg_dump` is missing.
    pub fn installed() -> Result<(), String> {
        postgres_bindir().map(drop)
    }

    /// Makes and starts a primary alone, in a new folder of the run.
    ///
    /// # Errors
    ///
    /// When PostgreSQL is not installed, or does not start (the message ends with its log).
    pub fn start() -> Result<PostgresReplicas, String> {
        let bindir = postgres_bindir()?;
        let run_as = run_as();
        let name = set_name("pg");
        let folder = run_folder()?.join(format!("{name}-primary"));
        make_folder(&folder)?;
        let port = free_port()?;
        let programs = Programs::Postgres {
            bindir: bindir.clone(),
        };
        let mut launch = programs.init(&folder, port, run_as)?;
        launch.args.extend(settings_args());
        let mut primary = Node {
            engine: Engine::Postgres,
            role: "primary".into(),
            folder,
            port,
            launch,
            process: None,
        };
        primary.start()?;
        let replicas = PostgresReplicas {
            name,
            bindir,
            run_as,
            nodes: vec![primary],
            upstream: vec![None],
        };
        replicas.ready(0)?;
        Ok(replicas)
    }

    /// Adds a standby of server `upstream` (the primary or another standby, for a chain): a base
    /// backup of it with its WAL streamed, set to follow it (`-R`), started and caught up.
    /// Returns its index.
    ///
    /// # Errors
    ///
    /// When the backup or the start fails.
    pub fn add_standby(&mut self, upstream: usize) -> Result<usize, String> {
        let up_port = node(&mut self.nodes, upstream)?.port;
        let index = self.nodes.len();
        let role = format!("standby {index}");
        let folder = run_folder()?.join(format!("{}-standby{index}", self.name));
        make_folder(&folder)?;
        give(self.run_as, "postgres", &folder)?;
        let data = folder.join("data");
        let (program, args) = as_user(self.run_as, "postgres", self.bindir.join("pg_basebackup"));
        let mut backup = Command::new(program);
        backup
            .args(args)
            .args([
                "-h",
                "127.0.0.1",
                "-p",
                &up_port.to_string(),
                "-U",
                "postgres",
            ])
            .arg("-D")
            .arg(&data)
            .args(["-R", "-X", "stream", "-c", "fast", "--no-sync"]);
        output(&mut backup).map_err(|e| format!("the base backup of {role}: {e}"))?;
        let port = free_port()?;
        let (program, mut args) = as_user(self.run_as, "postgres", self.bindir.join("postgres"));
        args.extend([
            "-D".into(),
            data.into_os_string(),
            "-p".into(),
            port.to_string().into(),
            "-k".into(),
            folder.as_os_str().to_owned(),
        ]);
        args.extend(settings_args());
        let mut standby = Node {
            engine: Engine::Postgres,
            role,
            folder,
            port,
            launch: Launch {
                program,
                args,
                url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
            },
            process: None,
        };
        standby.start()?;
        self.nodes.push(standby);
        self.upstream.push(Some(upstream));
        self.ready(index)?;
        self.wait_caught_up(index)?;
        Ok(index)
    }

    /// The URL of server `i`: `postgres://postgres@127.0.0.1:PORT/postgres`.
    ///
    /// # Panics
    ///
    /// When there is no server `i`.
    pub fn url(&self, i: usize) -> String {
        self.nodes[i].launch.url.clone()
    }

    /// The address of server `i`, for a relay.
    ///
    /// # Panics
    ///
    /// When there is no server `i`.
    pub fn address(&self, i: usize) -> SocketAddr {
        self.nodes[i].address()
    }

    /// Stops server `i` cleanly (fast shutdown): a standby stopped lags from now on.
    ///
    /// # Errors
    ///
    /// When it is not running, or had to be killed.
    pub fn stop(&mut self, i: usize) -> Result<(), String> {
        node(&mut self.nodes, i)?.stop()
    }

    /// Starts server `i` again and waits until it answers queries (a standby: once it has
    /// replayed its own WAL, whether or not its upstream is there to stream more).
    ///
    /// # Errors
    ///
    /// When it does not start or answer within 60 s.
    pub fn start_again(&mut self, i: usize) -> Result<(), String> {
        node(&mut self.nodes, i)?.start()?;
        self.ready(i)
    }

    /// Kills server `i` (SIGKILL, with its backends), as a crash.
    ///
    /// # Errors
    ///
    /// When it is not running.
    pub fn kill(&mut self, i: usize) -> Result<(), String> {
        node(&mut self.nodes, i)?.kill()
    }

    /// Promotes standby `i` (`SELECT pg_promote()`, which waits) and waits until it is out of
    /// recovery: a primary on a new timeline, which takes writes.
    ///
    /// # Errors
    ///
    /// When it is not a standby, or is still in recovery after 60 s.
    pub fn promote(&mut self, i: usize) -> Result<(), String> {
        if self.upstream.get(i).copied().flatten().is_none() {
            return Err(format!("server {i} is not a standby"));
        }
        let promoted = self.query(i, "SELECT pg_promote(true, 60)")?;
        if promoted != "t" {
            return Err(format!("pg_promote() on server {i} said {promoted:?}"));
        }
        wait_for(&format!("server {i} out of recovery"), || {
            Ok((self.query(i, "SELECT pg_is_in_recovery()")? == "f").then_some(()))
        })?;
        self.upstream[i] = None;
        Ok(())
    }

    /// Waits until standby `i` has replayed all the WAL its upstream has now (the upstream's
    /// `pg_current_wal_lsn()`, or its own replay position if it is a standby too).
    ///
    /// # Errors
    ///
    /// When `i` is not a standby, or has not caught up within 60 s.
    pub fn wait_caught_up(&self, i: usize) -> Result<(), String> {
        let upstream = self
            .upstream
            .get(i)
            .copied()
            .flatten()
            .ok_or_else(|| format!("server {i} is not a standby"))?;
        let target = self.query(
            upstream,
            "SELECT CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() \
             ELSE pg_current_wal_lsn() END",
        )?;
        let check = format!("SELECT pg_last_wal_replay_lsn() >= '{target}'::pg_lsn");
        wait_for(
            &format!("standby {i} caught up with server {upstream} at {target}"),
            || Ok((self.query(i, &check)? == "t").then_some(())),
        )
    }

    /// Runs `sql` on server `i` with `psql` and returns what it printed (unaligned, tuples
    /// only, trimmed).
    ///
    /// # Errors
    ///
    /// When the server does not answer, or the statement fails.
    pub fn query(&self, i: usize, sql: &str) -> Result<String, String> {
        let port = self.nodes.get(i).ok_or("no such server")?.port;
        output(self.psql(port).args(["-c", sql]))
    }

    /// Dumps the gdid tables of server `i` (`pg_dump -t 'gdid_*' --clean`) to a file in the
    /// server's folder named `name`: an old backup, to restore later with [`restore`].
    ///
    /// [`restore`]: PostgresReplicas::restore
    ///
    /// # Errors
    ///
    /// When `pg_dump` fails.
    pub fn dump_gdid_tables(&self, i: usize, name: &str) -> Result<PathBuf, String> {
        let server = self.nodes.get(i).ok_or("no such server")?;
        let file = server.folder.join(format!("{name}.sql"));
        let mut dump = Command::new(self.bindir.join("pg_dump"));
        dump.args(["-h", "127.0.0.1", "-p", &server.port.to_string()])
            .args(["-U", "postgres", "-d", "postgres", "-t", "gdid_*"])
            .args(["--clean", "--if-exists", "--no-owner", "-f"])
            .arg(&file)
            .env("PGCONNECT_TIMEOUT", "10");
        output(&mut dump)?;
        Ok(file)
    }

    /// Restores a dump made by [`dump_gdid_tables`] into server `i`: its gdid tables are
    /// dropped and made again as they were then.
    ///
    /// [`dump_gdid_tables`]: PostgresReplicas::dump_gdid_tables
    ///
    /// # Errors
    ///
    /// When `psql` fails.
    pub fn restore(&self, i: usize, dump: &Path) -> Result<(), String> {
        let port = self.nodes.get(i).ok_or("no such server")?.port;
        output(self.psql(port).arg("-f").arg(dump)).map(drop)
    }

    /// `psql` to the server on `port`, quiet, plain output, stopping at the first error.
    fn psql(&self, port: u16) -> Command {
        let mut psql = Command::new(self.bindir.join("psql"));
        psql.args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"])
            .args(["-h", "127.0.0.1", "-p", &port.to_string()])
            .args(["-U", "postgres", "-d", "postgres"])
            .env("PGCONNECT_TIMEOUT", "10");
        psql
    }

    /// Waits until server `i` answers a query (a server accepts connections before it can
    /// answer: "the database system is starting up").
    fn ready(&self, i: usize) -> Result<(), String> {
        wait_for(&format!("server {i} answering"), || {
            Ok((self.query(i, "SELECT 1")? == "1").then_some(()))
        })
    }
}

/// [`POSTGRES_SETTINGS`] as `-c` arguments.
fn settings_args() -> impl Iterator<Item = OsString> {
    POSTGRES_SETTINGS
        .into_iter()
        .flat_map(|setting| ["-c".into(), setting.into()])
}

/// PostgreSQL's programs, with the clients and tools a set of replicas needs besides the
/// server's: `Err` says which is missing.
fn postgres_bindir() -> Result<PathBuf, String> {
    let Programs::Postgres { bindir } = Engine::Postgres.find()? else {
        return Err("PostgreSQL's programs were not found".into());
    };
    for tool in ["initdb", "postgres", "pg_basebackup", "psql", "pg_dump"] {
        if !bindir.join(tool).is_file() {
            return Err(format!("{tool} is not installed in {}", bindir.display()));
        }
    }
    Ok(bindir)
}

// ----------------------------------------------------------------------------------------------
// MariaDB
// ----------------------------------------------------------------------------------------------

/// A MariaDB primary (server 0, `--server-id=1`) and a replica (server 1, `--server-id=2`), both
/// with a binary log (`ROW`, replicated changes logged too, so the replica can be a primary),
/// the replica attached by GTID (`MASTER_USE_GTID=slave_pos`). Database `test` is made on the
/// primary, so that it replicates. The servers run with `--skip-grant-tables` as the private
/// servers do: any client, and the replica's connection to the primary, is let in as `root`.
#[derive(Debug)]
pub struct MariaDbReplicas {
    client: PathBuf,
    nodes: Vec<Node>,
    /// Each server's primary: `None` for a primary.
    upstream: Vec<Option<usize>>,
}

impl MariaDbReplicas {
    /// Whether MariaDB's programs are installed here: `Err` says which is not.
    ///
    /// # Errors
    ///
    /// When `mariadbd`, `mariadb-install-db` or the `mariadb` client is missing.
    pub fn installed() -> Result<(), String> {
        mariadb_programs().map(drop)
    }

    /// Makes and starts a primary and a replica of it (their data folders made in parallel),
    /// replicating and caught up.
    ///
    /// # Errors
    ///
    /// When MariaDB is not installed, a server does not start (the message ends with its log),
    /// or replication does not start.
    pub fn start() -> Result<MariaDbReplicas, String> {
        let programs = mariadb_programs()?;
        let name = set_name("mariadb");
        let run = run_folder()?;
        let run_as = run_as();
        let made: Vec<Result<Node, String>> = std::thread::scope(|scope| {
            let threads: Vec<_> = [(1, "primary"), (2, "replica")]
                .map(|(id, role)| {
                    let (programs, folder) = (&programs, run.join(format!("{name}-{role}")));
                    scope.spawn(move || mariadb_node(programs, folder, id, role, run_as))
                })
                .into_iter()
                .collect();
            threads
                .into_iter()
                .map(|thread| thread.join().unwrap_or_else(|_| Err("panicked".into())))
                .collect()
        });
        let mut nodes = Vec::new();
        for node in made {
            nodes.push(node?);
        }
        let replicas = MariaDbReplicas {
            client: programs.client.clone(),
            nodes,
            upstream: vec![None, Some(0)],
        };
        replicas.query(0, "CREATE DATABASE IF NOT EXISTS test")?;
        replicas.query(
            1,
            &format!(
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, \
                 MASTER_USER='root', MASTER_USE_GTID=slave_pos; START SLAVE",
                replicas.nodes[0].port
            ),
        )?;
        replicas.wait_caught_up(1)?;
        Ok(replicas)
    }

    /// The URL of server `i`: `mysql://root@127.0.0.1:PORT/test`.
    ///
    /// # Panics
    ///
    /// When there is no server `i`.
    pub fn url(&self, i: usize) -> String {
        self.nodes[i].launch.url.clone()
    }

    /// The address of server `i`, for a relay.
    ///
    /// # Panics
    ///
    /// When there is no server `i`.
    pub fn address(&self, i: usize) -> SocketAddr {
        self.nodes[i].address()
    }

    /// Pauses replica `i`'s replication (`STOP SLAVE IO_THREAD`): it receives nothing more from
    /// its primary, and lags from now on.
    ///
    /// # Errors
    ///
    /// When the statement fails.
    pub fn pause(&self, i: usize) -> Result<(), String> {
        self.query(i, "STOP SLAVE IO_THREAD").map(drop)
    }

    /// Resumes replica `i`'s replication (`START SLAVE IO_THREAD`).
    ///
    /// # Errors
    ///
    /// When the statement fails.
    pub fn resume(&self, i: usize) -> Result<(), String> {
        self.query(i, "START SLAVE IO_THREAD").map(drop)
    }

    /// Waits until replica `i` has applied everything its primary has logged now (the primary's
    /// `@@gtid_binlog_pos`, with `MASTER_GTID_WAIT`).
    ///
    /// # Errors
    ///
    /// When `i` is not a replica, or has not caught up within 60 s.
    pub fn wait_caught_up(&self, i: usize) -> Result<(), String> {
        let primary = self
            .upstream
            .get(i)
            .copied()
            .flatten()
            .ok_or_else(|| format!("server {i} is not a replica"))?;
        let position = self.query(primary, "SELECT @@gtid_binlog_pos")?;
        let waited = self.query(
            i,
            &format!(
                "SELECT MASTER_GTID_WAIT('{position}', {})",
                PATIENCE.as_secs()
            ),
        )?;
        if waited == "0" {
            Ok(())
        } else {
            Err(format!(
                "replica {i} did not reach {position} within {PATIENCE:?}: {}",
                self.query(i, "SHOW SLAVE STATUS").unwrap_or_default()
            ))
        }
    }

    /// Stops server `i` cleanly (SIGTERM).
    ///
    /// # Errors
    ///
    /// When it is not running, or had to be killed.
    pub fn stop(&mut self, i: usize) -> Result<(), String> {
        node(&mut self.nodes, i)?.stop()
    }

    /// Starts server `i` again and waits until it serves clients.
    ///
    /// # Errors
    ///
    /// When it does not start within 60 s.
    pub fn start_again(&mut self, i: usize) -> Result<(), String> {
        node(&mut self.nodes, i)?.start()
    }

    /// Kills server `i` (SIGKILL), as a crash.
    ///
    /// # Errors
    ///
    /// When it is not running.
    pub fn kill(&mut self, i: usize) -> Result<(), String> {
        node(&mut self.nodes, i)?.kill()
    }

    /// Promotes replica `i` to a primary: replication stopped and forgotten (`STOP SLAVE;
    /// RESET SLAVE ALL`), and writable (`read_only` off).
    ///
    /// # Errors
    ///
    /// When `i` is not a replica, or a statement fails.
    pub fn promote(&mut self, i: usize) -> Result<(), String> {
        if self.upstream.get(i).copied().flatten().is_none() {
            return Err(format!("server {i} is not a replica"));
        }
        self.query(i, "STOP SLAVE; RESET SLAVE ALL; SET GLOBAL read_only = 0")?;
        self.upstream[i] = None;
        Ok(())
    }

    /// Runs `sql` on server `i` with the `mariadb` client and returns what it printed
    /// (tab-separated, no column names, trimmed).
    ///
    /// # Errors
    ///
    /// When the server does not answer, or a statement fails.
    pub fn query(&self, i: usize, sql: &str) -> Result<String, String> {
        let port = self.nodes.get(i).ok_or("no such server")?.port;
        let mut client = Command::new(&self.client);
        client
            .args(["--no-defaults", "--protocol=TCP", "-h", "127.0.0.1"])
            .args(["-P", &port.to_string(), "-u", "root", "-N", "-B"])
            .args(["--connect-timeout=10", "-e", sql]);
        output(&mut client)
    }
}

/// Makes the data folder of a MariaDB server with `--server-id=id` in `folder` and starts it:
/// the private servers' launch (no defaults, its own socket and pid file, loopback only, any
/// client let in) with a binary log, as a primary or a replica.
///
/// The data folder is made here rather than by the private servers' [`Programs::init`], for one
/// reason: `mariadb-install-db` run by several processes at once with the same temporary folder
/// (`/tmp`) fails now and then (`ERROR: 1051 Unknown table 'mysql.tmp_user_sys'`, 3 runs in 24
/// of two test processes at once here), so each server gets a temporary folder of its own, for
/// its installation (`TMPDIR`) and its running (`--tmpdir`).
fn mariadb_node(
    programs: &MariaDbPrograms,
    folder: PathBuf,
    id: u32,
    role: &str,
    run_as: RunAs,
) -> Result<Node, String> {
    let (data, tmp) = (folder.join("data"), folder.join("tmp"));
    make_folder(&tmp)?;
    give(run_as, "mysql", &folder)?;
    let user: Vec<OsString> = match run_as {
        RunAs::ServiceUsers => vec!["--user=mysql".into()],
        RunAs::Me => Vec::new(),
    };
    let mut install = Command::new(&programs.install_db);
    install
        .arg("--no-defaults")
        .arg(path_arg("--datadir=", &data))
        .args(&user)
        .arg("--auth-root-authentication-method=normal")
        .env("TMPDIR", &tmp);
    output(&mut install).map_err(|e| format!("making the data of MariaDB's {role}: {e}"))?;
    let port = free_port()?;
    // `--no-defaults` first: nothing of the machine's /etc/mysql (its port, socket, data).
    let mut args: Vec<OsString> = vec![
        "--no-defaults".into(),
        path_arg("--datadir=", &data),
        path_arg("--socket=", &folder.join("mysqld.sock")),
        path_arg("--pid-file=", &folder.join("mariadbd.pid")),
        path_arg("--tmpdir=", &tmp),
        format!("--port={port}").into(),
        "--bind-address=127.0.0.1".into(),
        "--skip-name-resolve".into(),
        // Any client, no password, the replica's connection to the primary too: the servers
        // live for a test, on loopback only.
        "--skip-grant-tables".into(),
        format!("--server-id={id}").into(),
        "--log-bin=mariadb-bin".into(),
        "--relay-log=relay-bin".into(),
        "--log-slave-updates".into(),
        "--binlog-format=ROW".into(),
    ];
    args.extend(user);
    let mut node = Node {
        engine: Engine::MariaDb,
        role: role.into(),
        folder,
        port,
        launch: Launch {
            program: programs.server.clone(),
            args,
            url: format!("mysql://root@127.0.0.1:{port}/test"),
        },
        process: None,
    };
    node.start()?;
    Ok(node)
}

/// `name=` followed by a path, as one argument.
fn path_arg(name: &str, path: &Path) -> OsString {
    let mut arg = OsString::from(name);
    arg.push(path);
    arg
}

/// MariaDB's programs: the server, the program that makes its data folder, and the client.
#[derive(Debug)]
struct MariaDbPrograms {
    server: PathBuf,
    install_db: PathBuf,
    client: PathBuf,
}

/// MariaDB's programs, found as the private servers find them, and its command-line client
/// (`mariadb`, or `mysql`) on the `PATH`.
fn mariadb_programs() -> Result<MariaDbPrograms, String> {
    let Programs::MariaDb { server, install_db } = Engine::MariaDb.find()? else {
        return Err("MariaDB's programs were not found".into());
    };
    let path = std::env::var_os("PATH").unwrap_or_default();
    let client = ["mariadb", "mysql"]
        .into_iter()
        .flat_map(|name| std::env::split_paths(&path).map(move |dir| dir.join(name)))
        .find(|candidate| candidate.is_file())
        .ok_or("the mariadb client is not installed")?;
    Ok(MariaDbPrograms {
        server,
        install_db,
        client,
    })
}
