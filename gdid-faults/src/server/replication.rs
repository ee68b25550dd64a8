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
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::AtomicU32;

use super::daemon::{Daemon, PATIENCE, output, wait_for};
use super::engine::{Engine, Programs, RunAs, as_user, free_port, make_folder, mariadb_programs};
use super::private::RunFolder;
use super::process::{self, Process};

/// What a set calls its members, and itself, in messages.
const SERVER: (&str, &str) = ("server", "set");

// ----------------------------------------------------------------------------------------------
// The run's folder, and running programs
// ----------------------------------------------------------------------------------------------

/// This process's folder of replicated servers, `replication/run-PID` ([`process::run_folder`]).
fn run_folder() -> Result<&'static Path, String> {
    static RUN: OnceLock<Result<RunFolder, String>> = OnceLock::new();
    process::run_folder(&RUN, "replication")
}

/// A new name for a set of servers in this process's run folder: `pg1`, `mariadb2`, ….
fn set_name(engine: &str) -> String {
    static SETS: AtomicU32 = AtomicU32::new(0);
    process::set_name(engine, &SETS)
}

// ----------------------------------------------------------------------------------------------
// A set of servers
// ----------------------------------------------------------------------------------------------

/// Replicated servers of one engine, each on its own port: server 0, the first primary, and
/// replicas of it (or of each other). `E` is what the engine's set needs besides its servers:
/// [`Postgres`] ([`PostgresReplicas`]) or [`MariaDb`] ([`MariaDbReplicas`]).
#[derive(Debug)]
pub struct Replicas<E> {
    engine: E,
    /// The set's name in the run's folder: `pg1`, `mariadb2`, ….
    name: String,
    run_as: RunAs,
    nodes: Vec<Process>,
    /// Each server's upstream (the server it replicates from): `None` for a primary.
    upstream: Vec<Option<usize>>,
}

impl<E> Replicas<E> {
    /// A new set without servers, named after `set` (`pg`, `mariadb`).
    fn new(engine: E, set: &str) -> Replicas<E> {
        Replicas {
            engine,
            name: set_name(set),
            run_as: RunAs::here(),
            nodes: Vec::new(),
            upstream: Vec::new(),
        }
    }

    /// The URL of server `i` (`postgres://postgres@127.0.0.1:PORT/postgres`,
    /// `mysql://root@127.0.0.1:PORT/test`).
    ///
    /// # Panics
    ///
    /// When there is no server `i`.
    pub fn url(&self, i: usize) -> String {
        self.nodes[i].daemon.launch.url.clone()
    }

    /// The log of server `i`: what its process printed, appended across its restarts.
    ///
    /// # Panics
    ///
    /// When there is no server `i`.
    pub fn log(&self, i: usize) -> PathBuf {
        self.nodes[i].daemon.folder.join("server.log")
    }

    /// The address of server `i`, for a relay.
    ///
    /// # Panics
    ///
    /// When there is no server `i`.
    pub fn address(&self, i: usize) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.nodes[i].daemon.port))
    }

    /// Stops server `i` cleanly (the engine's stop signal: PostgreSQL's fast shutdown, MariaDB's
    /// SIGTERM): a standby stopped lags from now on.
    ///
    /// # Errors
    ///
    /// When it is not running, or had to be killed.
    pub fn stop(&mut self, i: usize) -> Result<(), String> {
        self.node_mut(i)?.stop()
    }

    /// Kills server `i` (SIGKILL, with its whole process group: a PostgreSQL server's backends
    /// too), as a crash.
    ///
    /// # Errors
    ///
    /// When it is not running.
    pub fn kill(&mut self, i: usize) -> Result<(), String> {
        self.node_mut(i)?.kill()
    }

    /// The folder of this set's server `server` (`primary`, `standby1`) in the run's folder.
    fn folder(&self, server: &str) -> Result<PathBuf, String> {
        Ok(run_folder()?.join(format!("{}-{server}", self.name)))
    }

    /// Adds `node`, replicating from `upstream` (`None`: a primary); returns its index.
    fn push(&mut self, node: Process, upstream: Option<usize>) -> usize {
        self.nodes.push(node);
        self.upstream.push(upstream);
        self.nodes.len() - 1
    }

    /// Server `i`, or says there is none.
    fn node(&self, i: usize) -> Result<&Process, String> {
        Ok(&self.nodes[process::member(self.nodes.len(), i, SERVER)?])
    }

    /// Server `i`, to start or stop, or says there is none.
    fn node_mut(&mut self, i: usize) -> Result<&mut Process, String> {
        let i = process::member(self.nodes.len(), i, SERVER)?;
        Ok(&mut self.nodes[i])
    }

    /// The port of server `i`.
    fn port(&self, i: usize) -> Result<u16, String> {
        self.node(i).map(|node| node.daemon.port)
    }

    /// The upstream of server `i`, a `replica` (the engine's word for it); `Err` when it is not
    /// one.
    fn upstream_of(&self, i: usize, replica: &str) -> Result<usize, String> {
        self.upstream
            .get(i)
            .copied()
            .flatten()
            .ok_or_else(|| format!("server {i} is not a {replica}"))
    }
}

// ----------------------------------------------------------------------------------------------
// PostgreSQL
// ----------------------------------------------------------------------------------------------

/// Settings every PostgreSQL server of a set starts with, besides the private servers' (which
/// listen on 127.0.0.1 only): as many connections on the standbys as on the primary (a hot
/// standby needs at least as many), room for fifty clients' pools, WAL kept for a standby that
/// was stopped a while, and no fsync (the faults here kill processes, never the machine, whose
/// page cache keeps what a killed server wrote).
const POSTGRES_SETTINGS: [&str; 3] = ["max_connections=300", "wal_keep_size=256MB", "fsync=off"];

/// A PostgreSQL primary (server 0) and standbys replicating from it, or from each other, by
/// asynchronous streaming (`pg_basebackup -R -X stream`), each on its own port. Promoting a
/// standby makes it a primary (a new timeline); the old primary is not fenced: kill it first.
pub type PostgresReplicas = Replicas<Postgres>;

/// What a [`PostgresReplicas`] needs besides its servers: PostgreSQL's programs, and whether
/// they authenticate as a stock installation does ([`start_stock`](Replicas::start_stock)).
#[derive(Debug)]
pub struct Postgres {
    bindir: PathBuf,
    /// `Some`: a stock installation's authentication, with these lines of the test's first.
    stock: Option<StockAuthentication>,
}

/// The `pg_hba.conf` and `pg_ident.conf` of a set started by
/// [`start_stock`](Replicas::start_stock): a stock installation's, after the lines a test added.
#[derive(Debug, Default)]
struct StockAuthentication {
    /// The OS user the servers run as (`postgres` when the suite runs as root).
    server_user: String,
    /// Lines of `pg_hba.conf` before the stock ones (the first line that matches decides).
    hba: Vec<String>,
    /// Lines of `pg_ident.conf` after the stock one.
    ident: Vec<String>,
}

impl StockAuthentication {
    /// `pg_hba.conf`: the test's lines, then a stock installation's (Debian's, with the server's
    /// OS user mapped to `postgres`, which is that user itself when the suite runs as root).
    fn hba(&self) -> String {
        let mut lines = self.hba.clone();
        lines.extend([
            "local all postgres peer map=server".to_owned(),
            "local all all scram-sha-256".to_owned(),
            "host all all 127.0.0.1/32 scram-sha-256".to_owned(),
        ]);
        lines.join("\n") + "\n"
    }

    /// `pg_ident.conf`: the server's OS user is `postgres`, then the test's lines.
    fn ident(&self) -> String {
        let mut lines = vec![format!("server {} postgres", self.server_user)];
        lines.extend(self.ident.iter().cloned());
        lines.join("\n") + "\n"
    }
}

impl Replicas<Postgres> {
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
        Self::start_with(&[])
    }

    /// As [`start`](Self::start), the primary started with `settings` too (`name=value`, each
    /// a `-c` argument after the set's own, so `fsync=on` overrides theirs).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_with(settings: &[&str]) -> Result<PostgresReplicas, String> {
        Self::start_primary(settings, false)
    }

    /// As [`start_with`](Self::start_with), but authenticating as a stock installation does:
    /// `local all postgres peer` (the servers' OS user, mapped to `postgres`), a password
    /// (`scram-sha-256`) for every other role over the socket and from 127.0.0.1. The set's own
    /// statements ([`query`](Self::query)) run as `postgres` over the socket, as the servers'
    /// OS user; clients log in with [`url_as`](Self::url_as) as roles given a password. The
    /// server reads passwords for its own connections from [`passfile`](Self::passfile)
    /// (`PGPASSFILE`), and runs with `RUST_BACKTRACE=1`: an error of an extension in Rust that
    /// carries a backtrace shows it (in its `DETAIL`). A stock set has no standbys.
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_stock(settings: &[&str]) -> Result<PostgresReplicas, String> {
        Self::start_primary(settings, true)
    }

    /// Makes and starts a primary with `settings`, authenticating as a stock installation does
    /// when `stock`.
    fn start_primary(settings: &[&str], stock: bool) -> Result<PostgresReplicas, String> {
        let run_as = RunAs::here();
        let stock = match stock {
            true => Some(StockAuthentication {
                server_user: server_user(run_as)?,
                ..StockAuthentication::default()
            }),
            false => None,
        };
        let mut replicas = Replicas::new(
            Postgres {
                bindir: postgres_bindir()?,
                stock,
            },
            "pg",
        );
        let folder = replicas.folder("primary")?;
        let programs = replicas.programs();
        let mut primary = Daemon::init(&programs, "PostgreSQL primary", folder, replicas.run_as)?;
        primary.launch.args.extend(settings_args());
        for setting in settings {
            primary.launch.args.extend(["-c".into(), (*setting).into()]);
        }
        if let Some(stock) = &replicas.engine.stock {
            let data = primary.folder.join("data");
            write(&data.join("pg_hba.conf"), &stock.hba())?;
            write(&data.join("pg_ident.conf"), &stock.ident())?;
            // `env PGPASSFILE=… RUST_BACKTRACE=1 postgres …`: env runs the server in its place
            // (the same process).
            let launch = &mut primary.launch;
            let mut passfile = OsString::from("PGPASSFILE=");
            passfile.push(primary.folder.join("pgpass"));
            let program = std::mem::replace(&mut launch.program, PathBuf::from("env"));
            let mut args = vec![
                passfile,
                "RUST_BACKTRACE=1".into(),
                program.into_os_string(),
            ];
            args.append(&mut launch.args);
            launch.args = args;
        }
        replicas.push(Process::started(primary)?, None);
        replicas.ready(0)?;
        Ok(replicas)
    }

    /// The URL of server `i` for `role` logging in with `password`, over TCP
    /// (`postgres://ROLE:PASSWORD@127.0.0.1:PORT/postgres`); both are percent-encoded.
    ///
    /// # Panics
    ///
    /// When there is no server `i`.
    pub fn url_as(&self, i: usize, role: &str, password: &str) -> String {
        let encode = |text: &str| {
            text.bytes()
                .map(|byte| match byte {
                    b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (byte as char).to_string(),
                    _ => format!("%{byte:02X}"),
                })
                .collect::<String>()
        };
        format!(
            "postgres://{}:{}@127.0.0.1:{}/postgres",
            encode(role),
            encode(password),
            self.nodes[i].daemon.port
        )
    }

    /// The OS user the servers run as (`postgres` when the suite runs as root, else the suite's
    /// own): the user a peer map of a stock set names.
    ///
    /// # Errors
    ///
    /// When the user's name cannot be read.
    pub fn server_user(&self) -> Result<String, String> {
        server_user(self.run_as)
    }

    /// The folder of server `i`'s Unix socket.
    ///
    /// # Panics
    ///
    /// When there is no server `i`.
    pub fn socket_folder(&self, i: usize) -> PathBuf {
        self.nodes[i].daemon.folder.clone()
    }

    /// The password file server `i` of a stock set reads for its own connections (its
    /// `PGPASSFILE`; there is none until [`write_passfile`](Self::write_passfile)).
    ///
    /// # Panics
    ///
    /// When there is no server `i`.
    pub fn passfile(&self, i: usize) -> PathBuf {
        self.nodes[i].daemon.folder.join("pgpass")
    }

    /// Writes server `i`'s [`passfile`](Self::passfile) (`host:port:database:user:password`
    /// lines): readable by the servers' OS user alone (mode 0600), as a client insists.
    ///
    /// # Errors
    ///
    /// When there is no server `i` or the file cannot be written.
    pub fn write_passfile(&self, i: usize, lines: &str) -> Result<(), String> {
        self.node(i)?;
        let file = self.passfile(i);
        write(&file, lines)?;
        std::fs::set_permissions(&file, std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .map_err(|e| format!("{}: {e}", file.display()))?;
        if self.run_as == RunAs::ServiceUsers {
            output(Command::new("chown").arg("postgres:postgres").arg(&file))?;
        }
        Ok(())
    }

    /// Lets roles of a stock set in as the DBA would: `hba` lines go before the stock ones of
    /// `pg_hba.conf` (the first that matches decides), `ident` lines after the stock one of
    /// `pg_ident.conf`; the server reloads them.
    ///
    /// # Errors
    ///
    /// When the set is not a stock one, the files cannot be written or the server does not
    /// reload.
    pub fn authenticate(&mut self, i: usize, hba: &[&str], ident: &[&str]) -> Result<(), String> {
        let data = self.node(i)?.daemon.folder.join("data");
        let stock = self
            .engine
            .stock
            .as_mut()
            .ok_or("the set does not authenticate as a stock installation (start_stock)")?;
        stock.hba.extend(hba.iter().map(|line| (*line).to_owned()));
        stock
            .ident
            .extend(ident.iter().map(|line| (*line).to_owned()));
        write(&data.join("pg_hba.conf"), &stock.hba())?;
        write(&data.join("pg_ident.conf"), &stock.ident())?;
        self.query(i, "SELECT pg_reload_conf()").map(drop)
    }

    /// Adds a standby of server `upstream` (the primary or another standby, for a chain): a base
    /// backup of it with its WAL streamed, set to follow it (`-R`), started and caught up.
    /// Returns its index.
    ///
    /// # Errors
    ///
    /// When the backup or the start fails.
    pub fn add_standby(&mut self, upstream: usize) -> Result<usize, String> {
        let up_port = self.port(upstream)?;
        let index = self.nodes.len();
        let name = format!("PostgreSQL standby {index}");
        let folder = self.folder(&format!("standby{index}"))?;
        make_folder(&folder)?;
        self.run_as.give("postgres", &folder)?;
        let pg_basebackup = self.engine.bindir.join("pg_basebackup");
        let (program, args) = as_user(self.run_as, "postgres", pg_basebackup);
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
            .arg(folder.join("data"))
            .args(["-R", "-X", "stream", "-c", "fast", "--no-sync"]);
        output(&mut backup).map_err(|e| format!("the base backup of {name}: {e}"))?;
        let port = free_port()?;
        let mut launch = self.programs().launch(&folder, port, self.run_as);
        launch.args.extend(settings_args());
        let standby = Daemon {
            engine: Engine::Postgres,
            name,
            folder,
            port,
            launch,
        };
        let index = self.push(Process::started(standby)?, Some(upstream));
        self.ready(index)?;
        self.wait_caught_up(index)?;
        Ok(index)
    }

    /// Starts server `i` again and waits until it answers queries (a standby: once it has
    /// replayed its own WAL, whether or not its upstream is there to stream more).
    ///
    /// # Errors
    ///
    /// When it does not start or answer within 60 s.
    pub fn start_again(&mut self, i: usize) -> Result<(), String> {
        self.node_mut(i)?.start()?;
        self.ready(i)
    }

    /// Promotes standby `i` (`SELECT pg_promote()`, which waits) and waits until it is out of
    /// recovery: a primary on a new timeline, which takes writes.
    ///
    /// # Errors
    ///
    /// When it is not a standby, or is still in recovery after 60 s.
    pub fn promote(&mut self, i: usize) -> Result<(), String> {
        self.upstream_of(i, "standby")?;
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
        let upstream = self.upstream_of(i, "standby")?;
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
        output(self.psql(self.port(i)?).args(["-c", sql]))
    }

    /// Lets clients from `cidr` (`10.201.0.0/16`) in without a password, as those of
    /// 127.0.0.1 are (a `host … trust` line in `pg_hba.conf`, reloaded): for clients in other
    /// network namespaces. The server must listen on their side too (`listen_addresses`).
    ///
    /// # Errors
    ///
    /// When the file cannot be written or the server does not reload.
    pub fn trust_network(&self, i: usize, cidr: &str) -> Result<(), String> {
        let hba = self.node(i)?.daemon.folder.join("data").join("pg_hba.conf");
        let mut file = std::fs::OpenOptions::new()
            .append(true)
            .open(&hba)
            .map_err(|e| format!("{}: {e}", hba.display()))?;
        std::io::Write::write_all(&mut file, format!("host all all {cidr} trust\n").as_bytes())
            .map_err(|e| format!("{}: {e}", hba.display()))?;
        self.query(i, "SELECT pg_reload_conf()").map(drop)
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
        let server = &self.node(i)?.daemon;
        let file = server.folder.join(format!("{name}.sql"));
        let mut dump = Command::new(self.engine.bindir.join("pg_dump"));
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
        output(self.psql(self.port(i)?).arg("-f").arg(dump)).map(drop)
    }

    /// The private servers' programs of PostgreSQL, for this set's servers.
    fn programs(&self) -> Programs {
        Programs::Postgres {
            bindir: self.engine.bindir.clone(),
        }
    }

    /// `psql` to the server on `port`, quiet, plain output, stopping at the first error: over
    /// 127.0.0.1, or for a stock set over the server's socket as its OS user (peer).
    fn psql(&self, port: u16) -> Command {
        let program = self.engine.bindir.join("psql");
        let server = self.nodes.iter().find(|node| node.daemon.port == port);
        let mut psql = match (&self.engine.stock, server) {
            (Some(_), Some(server)) => {
                let (program, args) = as_user(self.run_as, "postgres", program);
                let mut psql = Command::new(program);
                psql.args(args).arg("-h").arg(&server.daemon.folder);
                psql
            }
            _ => {
                let mut psql = Command::new(program);
                psql.args(["-h", "127.0.0.1"]);
                psql
            }
        };
        psql.args(["-X", "-A", "-t", "-q", "-v", "ON_ERROR_STOP=1"])
            .args(["-p", &port.to_string()])
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

/// Writes `text` into `file` (an existing file keeps its owner and mode).
fn write(file: &Path, text: &str) -> Result<(), String> {
    std::fs::write(file, text).map_err(|e| format!("{}: {e}", file.display()))
}

/// The OS user the servers run as, as [`RunAs`] says.
fn server_user(run_as: RunAs) -> Result<String, String> {
    match run_as {
        RunAs::ServiceUsers => Ok("postgres".to_owned()),
        RunAs::Me => output(Command::new("id").arg("-un")),
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
pub type MariaDbReplicas = Replicas<MariaDb>;

/// What a [`MariaDbReplicas`] needs besides its servers: MariaDB's command-line client.
#[derive(Debug)]
pub struct MariaDb {
    client: PathBuf,
}

impl Replicas<MariaDb> {
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
        let (programs, client) = mariadb_programs()?;
        let mut replicas = Replicas::new(MariaDb { client }, "mariadb");
        let run_as = replicas.run_as;
        let made: Vec<Result<Process, String>> = std::thread::scope(|scope| {
            let threads: Vec<_> = [(1, "primary"), (2, "replica")]
                .map(|(id, role)| {
                    let (programs, folder) = (&programs, replicas.folder(role));
                    scope.spawn(move || mariadb_node(programs, folder?, id, role, run_as))
                })
                .into_iter()
                .collect();
            threads
                .into_iter()
                .map(|thread| thread.join().unwrap_or_else(|_| Err("panicked".into())))
                .collect()
        });
        for (node, upstream) in made.into_iter().zip([None, Some(0)]) {
            replicas.push(node?, upstream);
        }
        replicas.query(0, "CREATE DATABASE IF NOT EXISTS test")?;
        replicas.query(
            1,
            &format!(
                "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT={}, \
                 MASTER_USER='root', MASTER_USE_GTID=slave_pos; START SLAVE",
                replicas.port(0)?
            ),
        )?;
        replicas.wait_caught_up(1)?;
        Ok(replicas)
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
        let primary = self.upstream_of(i, "replica")?;
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

    /// Starts server `i` again and waits until it serves clients.
    ///
    /// # Errors
    ///
    /// When it does not start within 60 s.
    pub fn start_again(&mut self, i: usize) -> Result<(), String> {
        self.node_mut(i)?.start()
    }

    /// Promotes replica `i` to a primary: replication stopped and forgotten (`STOP SLAVE;
    /// RESET SLAVE ALL`), and writable (`read_only` off).
    ///
    /// # Errors
    ///
    /// When `i` is not a replica, or a statement fails.
    pub fn promote(&mut self, i: usize) -> Result<(), String> {
        self.upstream_of(i, "replica")?;
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
        let port = self.port(i)?;
        let mut client = Command::new(&self.engine.client);
        client
            .args(["--no-defaults", "--protocol=TCP", "-h", "127.0.0.1"])
            .args(["-P", &port.to_string(), "-u", "root", "-N", "-B"])
            .args(["--connect-timeout=10", "-e", sql]);
        output(&mut client)
    }
}

/// Makes a MariaDB server with `--server-id=id` in `folder` and starts it: a private server
/// ([`Programs::init`]: its own temporary folder too, so that servers made at once do not
/// clash) with a binary log, as a primary or a replica.
fn mariadb_node(
    programs: &Programs,
    folder: PathBuf,
    id: u32,
    role: &str,
    run_as: RunAs,
) -> Result<Process, String> {
    let mut daemon = Daemon::init(programs, format!("MariaDB {role}"), folder, run_as)
        .map_err(|e| format!("making MariaDB's {role}: {e}"))?;
    daemon.launch.args.extend([
        format!("--server-id={id}").into(),
        "--log-bin=mariadb-bin".into(),
        "--relay-log=relay-bin".into(),
        "--log-slave-updates".into(),
        "--binlog-format=ROW".into(),
    ]);
    Process::started(daemon)
}
