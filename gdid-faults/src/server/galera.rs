//! [`GaleraCluster`]: private MariaDB servers joined in a Galera cluster (synchronous
//! multi-primary replication, `wsrep`), each on its own ports on 127.0.0.1, for the Galera tests:
//! writers on every node at once, a node killed and rejoined, a node cut from the group, the
//! whole cluster killed and bootstrapped again from its most advanced node.
//!
//! Each node is a `mariadbd` with a data folder of its own (`mariadb-install-db`), a client
//! port, a socket, a group port (`gmcast.listen_addr`), an IST port (`ist.recv_addr`) and an SST
//! port (`wsrep_sst_receive_address`, `rsync`), its settings in a `my.cnf` of its folder (read
//! with `--defaults-file`: nothing of the machine's `/etc/mysql`). Node 0 starts the cluster
//! (`--wsrep-new-cluster`), the others join it one after the other (a state transfer each).
//!
//! Like the replicated servers ([`MariaDbReplicas`](super::MariaDbReplicas)) the nodes run as
//! `mysql` when the suite runs as root, never on the machine's own ports, and live in folders of
//! their own: `galera/run-PID` under [`PrivateServers::root`], one folder per node in it. A
//! cluster's nodes are killed (their whole process group) and their folders removed when it is
//! dropped; a clean-up process (`reap.sh`, as for the private servers) stops what is left and
//! removes the run's folder when the process ends however it ends; and the first cluster of a
//! run removes what runs killed with their clean-up left behind.
//!
//! Every call here blocks (it runs `mariadbd` and the `mariadb` client): call it from a test's
//! own thread, or from `spawn_blocking`.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::AtomicU32;

use super::daemon::{Daemon, output, wait_for};
use super::engine::{Programs, RunAs, free_port, mariadb_programs};
use super::private::RunFolder;
use super::process::{self, Process};

/// What a cluster calls its members, and itself, in messages.
const NODE: (&str, &str) = ("node", "cluster");

/// The Galera provider, as Debian's `galera-4` installs it.
const PROVIDER: &str = "/usr/lib/galera/libgalera_smm.so";

/// The group layer's timeouts: a node that stops answering is left out of the view after about
/// 3 s (the default is 5 s, and the cluster's commits wait meanwhile), and looked at every
/// second.
const GROUP_TIMEOUTS: &str = "evs.keepalive_period=PT1S;evs.inactive_check_period=PT1S;\
                              evs.suspect_timeout=PT3S;evs.inactive_timeout=PT6S";

/// The write-set cache of each node (the default, 128 MB, is written out at every start).
const GCACHE: &str = "gcache.size=64M";

// ----------------------------------------------------------------------------------------------
// The run's folder, and running programs
// ----------------------------------------------------------------------------------------------

/// This process's folder of Galera nodes, `galera/run-PID` ([`process::run_folder`]).
fn run_folder() -> Result<&'static Path, String> {
    static RUN: OnceLock<Result<RunFolder, String>> = OnceLock::new();
    process::run_folder(&RUN, "galera")
}

/// A new name for a cluster in this process's run folder: `galera1`, `galera2`, …. (Its
/// `wsrep_cluster_name` adds the process's id: clusters of two test processes never merge.)
fn cluster_name() -> String {
    static CLUSTERS: AtomicU32 = AtomicU32::new(0);
    process::set_name("galera", &CLUSTERS)
}

/// `name=` followed by a path, as one argument.
fn path_arg(name: &str, path: &Path) -> OsString {
    let mut arg = OsString::from(name);
    arg.push(path);
    arg
}

/// MariaDB's server, its installer, and its command-line client (`mariadb`, or `mysql`).
#[derive(Debug, Clone)]
struct MariaDbPrograms {
    /// What the private servers use: `mariadbd` and `mariadb-install-db`.
    programs: Programs,
    server: PathBuf,
    client: PathBuf,
}

impl MariaDbPrograms {
    /// Finds them, and the Galera provider: `Err` says what is missing.
    fn find() -> Result<MariaDbPrograms, String> {
        if !Path::new(PROVIDER).is_file() {
            return Err(format!(
                "the Galera provider {PROVIDER} is not installed (apt-get install galera-4)"
            ));
        }
        let (programs, client) = mariadb_programs()?;
        let Programs::MariaDb { server, .. } = &programs else {
            return Err("MariaDB's programs were not found".into());
        };
        let server = server.clone();
        let path = std::env::var_os("PATH").unwrap_or_default();
        for (tool, why) in [
            ("rsync", "state transfers"),
            ("wsrep_sst_rsync", "rsync SST"),
        ] {
            if !std::env::split_paths(&path).any(|dir| dir.join(tool).is_file()) {
                return Err(format!("{tool} is not installed (needed for {why})"));
            }
        }
        Ok(MariaDbPrograms {
            programs,
            server,
            client,
        })
    }
}

// ----------------------------------------------------------------------------------------------
// One node
// ----------------------------------------------------------------------------------------------

/// The ports of one node, each on 127.0.0.1.
#[derive(Debug, Clone, Copy)]
struct Ports {
    /// Clients (`port`).
    client: u16,
    /// The group's traffic (`gmcast.listen_addr`).
    group: u16,
    /// Incremental state transfers received (`ist.recv_addr`).
    ist: u16,
    /// Full state transfers received, by `rsync` (`wsrep_sst_receive_address`).
    sst: u16,
}

/// One node of a cluster: its [`Process`] (folder, client port, launch; killed and its folder
/// removed when dropped) and its other ports.
#[derive(Debug)]
struct Node {
    process: Process,
    ports: Ports,
}

impl Node {
    /// `my.cnf` in its folder.
    fn config(&self) -> PathBuf {
        self.process.daemon.folder.join("my.cnf")
    }

    /// Its data folder.
    fn data(&self) -> PathBuf {
        self.process.daemon.folder.join("data")
    }

    /// Writes its `my.cnf`: a private server's settings, the cluster's (`cluster_address`), then
    /// `settings`, which override them. Each node has a server id of its own (`server_id`) and a
    /// binary log of every write, its own and the cluster's (`log_slave_updates`), as the nodes
    /// of a cluster that feeds asynchronous replicas or point-in-time recovery have.
    fn write_config(
        &self,
        server_id: usize,
        cluster: &str,
        cluster_address: &str,
        run_as: RunAs,
        settings: &[&str],
    ) -> Result<(), String> {
        let folder = &self.process.daemon.folder;
        let Ports {
            client,
            group,
            ist,
            sst,
        } = self.ports;
        let mut lines = vec![
            "[mariadbd]".to_owned(),
            format!("datadir={}", self.data().display()),
            format!("socket={}", folder.join("mysqld.sock").display()),
            format!("pid-file={}", folder.join("mariadbd.pid").display()),
            format!("tmpdir={}", folder.join("tmp").display()),
            format!("port={client}"),
            "bind-address=127.0.0.1".to_owned(),
            "skip-name-resolve".to_owned(),
            // Any client, no password: the cluster lives for the suite on loopback only.
            "skip-grant-tables".to_owned(),
            format!("server_id={server_id}"),
            "log_bin=mariadb-bin".to_owned(),
            "log_slave_updates=ON".to_owned(),
            "binlog_format=ROW".to_owned(),
            "default_storage_engine=InnoDB".to_owned(),
            "innodb_autoinc_lock_mode=2".to_owned(),
            "innodb_buffer_pool_size=64M".to_owned(),
            "max_connections=300".to_owned(),
            "wsrep_on=ON".to_owned(),
            format!("wsrep_provider={PROVIDER}"),
            format!("wsrep_cluster_name=gdid-{}-{cluster}", std::process::id()),
            format!("wsrep_cluster_address={cluster_address}"),
            "wsrep_node_address=127.0.0.1".to_owned(),
            format!(
                "wsrep_node_name={}",
                self.process.daemon.name.replace(' ', "-")
            ),
            format!(
                "wsrep_provider_options=\"gmcast.listen_addr=tcp://127.0.0.1:{group};\
                 ist.recv_addr=127.0.0.1:{ist};{GCACHE};{GROUP_TIMEOUTS}\""
            ),
            "wsrep_sst_method=rsync".to_owned(),
            format!("wsrep_sst_receive_address=127.0.0.1:{sst}"),
        ];
        if run_as == RunAs::ServiceUsers {
            lines.push("user=mysql".to_owned());
        }
        lines.extend(settings.iter().map(|line| (*line).to_owned()));
        let config = self.config();
        std::fs::write(&config, lines.join("\n") + "\n")
            .map_err(|e| format!("{}: {e}", config.display()))
    }

    /// Starts `mariadbd` with its `my.cnf` and `extra` arguments, and waits until it serves
    /// clients ([`Process::start`]: a joining node only does once its state transfer is done).
    fn start(&mut self, extra: &[OsString]) -> Result<(), String> {
        if self.process.was_started() {
            return Err(format!("{} is running already", self.process.daemon.name));
        }
        // `--defaults-file` first: nothing of the machine's /etc/mysql.
        let mut args = vec![path_arg("--defaults-file=", &self.config())];
        args.extend(extra.iter().cloned());
        self.process.daemon.launch.args = args;
        self.process.start()
    }

    /// `grastate.dat` of its data folder: the state it saved (`uuid`, `seqno`,
    /// `safe_to_bootstrap`), empty before its first start.
    fn grastate(&self) -> Result<String, String> {
        let file = self.data().join("grastate.dat");
        match std::fs::read_to_string(&file) {
            Ok(text) => Ok(text),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(String::new()),
            Err(e) => Err(format!("{}: {e}", file.display())),
        }
    }

    /// Sets `safe_to_bootstrap: 1` in its `grastate.dat` (in place: the file keeps its owner).
    fn mark_safe_to_bootstrap(&self) -> Result<(), String> {
        let file = self.data().join("grastate.dat");
        let text = self.grastate()?;
        if !text.contains("safe_to_bootstrap:") {
            return Err(format!("{} has no safe_to_bootstrap line", file.display()));
        }
        let marked: Vec<String> = text
            .lines()
            .map(|line| match line.starts_with("safe_to_bootstrap:") {
                true => "safe_to_bootstrap: 1".to_owned(),
                false => line.to_owned(),
            })
            .collect();
        std::fs::write(&file, marked.join("\n") + "\n")
            .map_err(|e| format!("{}: {e}", file.display()))
    }

    /// The position it saved in `grastate.dat` (`UUID:SEQNO`), when it stopped cleanly; `None`
    /// after a crash (`seqno: -1`) or before its first start.
    fn saved_position(&self) -> Result<Option<Position>, String> {
        let text = self.grastate()?;
        let field = |name: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(name))
                .map(str::trim)
        };
        match (field("uuid:"), field("seqno:").map(str::parse::<i64>)) {
            (Some(uuid), Some(Ok(seqno))) if seqno >= 0 => Ok(Some(Position {
                uuid: uuid.to_owned(),
                seqno,
            })),
            _ => Ok(None),
        }
    }

    /// The position it reached, recovered from its storage after a crash (`mariadbd
    /// --wsrep-recover`, as `galera_recovery` does before a service starts), or the one saved
    /// in `grastate.dat` after a clean stop. The node must be down.
    fn position(&self, server: &Path) -> Result<Position, String> {
        if let Some(saved) = self.saved_position()? {
            return Ok(saved);
        }
        let log = self.process.daemon.folder.join("recover.log");
        let _ = std::fs::remove_file(&log);
        let mut recover = Command::new(server);
        recover
            .arg(path_arg("--defaults-file=", &self.config()))
            .arg("--wsrep-recover")
            .arg(path_arg("--log-error=", &log));
        output(&mut recover).map_err(|e| {
            format!(
                "{}: mariadbd --wsrep-recover: {e}",
                self.process.daemon.name
            )
        })?;
        let text = std::fs::read_to_string(&log).map_err(|e| format!("{}: {e}", log.display()))?;
        text.lines()
            .rev()
            .find_map(|line| line.split_once("WSREP: Recovered position:"))
            .and_then(|(_, position)| Position::parse(position.trim()))
            .ok_or_else(|| {
                format!(
                    "{}: no position recovered; {}",
                    self.process.daemon.name,
                    super::engine::tail(&log)
                )
            })
    }
}

/// Where a node's state is: the cluster's history (`uuid`) and the last write-set it applied
/// (`seqno`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Position {
    uuid: String,
    seqno: i64,
}

impl Position {
    /// `UUID:SEQNO` (Galera 4 may add `,GTID` after it: ignored).
    fn parse(text: &str) -> Option<Position> {
        let text = text.split(',').next()?;
        let (uuid, seqno) = text.rsplit_once(':')?;
        Some(Position {
            uuid: uuid.to_owned(),
            seqno: seqno.trim().parse().ok()?,
        })
    }

    /// `--wsrep_start_position=UUID:SEQNO`: where the node starts from, so that it can ask for
    /// an incremental transfer of what it missed.
    fn start_argument(&self) -> OsString {
        format!("--wsrep_start_position={}:{}", self.uuid, self.seqno).into()
    }
}

// ----------------------------------------------------------------------------------------------
// The cluster
// ----------------------------------------------------------------------------------------------

/// A Galera cluster of private MariaDB nodes on 127.0.0.1, as this module's documentation
/// says. Node `i` serves clients at [`url(i)`](Self::url); database `test` exists on every node.
#[derive(Debug)]
pub struct GaleraCluster {
    programs: MariaDbPrograms,
    nodes: Vec<Node>,
}

impl GaleraCluster {
    /// Whether a Galera cluster can be run here: `Err` says what is missing (the provider,
    /// `mariadbd`, `mariadb-install-db`, the `mariadb` client, `rsync`).
    ///
    /// # Errors
    ///
    /// When one of them is not installed.
    pub fn installed() -> Result<(), String> {
        MariaDbPrograms::find().map(drop)
    }

    /// Makes and starts a cluster of `nodes` nodes, each synced and in the primary component,
    /// with database `test`.
    ///
    /// # Errors
    ///
    /// When Galera or MariaDB is not installed, or a node does not start or join (the message
    /// ends with its log).
    pub fn start(nodes: usize) -> Result<GaleraCluster, String> {
        Self::start_with(nodes, &[])
    }

    /// As [`start`](Self::start), each node's `my.cnf` ending with `settings` (lines of its
    /// `[mariadbd]` section, which override the cluster's: `innodb_flush_log_at_trx_commit=2`).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start).
    pub fn start_with(nodes: usize, settings: &[&str]) -> Result<GaleraCluster, String> {
        if nodes == 0 {
            return Err("a cluster needs a node".into());
        }
        let programs = MariaDbPrograms::find()?;
        let run_as = RunAs::here();
        let cluster = cluster_name();
        let folder = run_folder()?;
        let ports = distinct_ports(nodes)?;
        let made: Vec<Result<Node, String>> = std::thread::scope(|scope| {
            let threads: Vec<_> = ports
                .iter()
                .enumerate()
                .map(|(i, ports)| {
                    let programs = &programs.programs;
                    let folder = folder.join(format!("{cluster}-node{i}"));
                    scope.spawn(move || {
                        let mut daemon =
                            Daemon::init(programs, format!("Galera node {i}"), folder, run_as)
                                .map_err(|e| format!("making Galera node {i}: {e}"))?;
                        daemon.port = ports.client;
                        daemon.launch.url = format!("mysql://root@127.0.0.1:{}/test", ports.client);
                        Ok(Node {
                            process: Process::new(daemon),
                            ports: *ports,
                        })
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|thread| thread.join().unwrap_or_else(|_| Err("panicked".into())))
                .collect()
        });
        let mut galera = GaleraCluster {
            programs,
            nodes: Vec::new(),
        };
        for node in made {
            galera.nodes.push(node?);
        }
        let address = galera.cluster_address();
        for (i, node) in galera.nodes.iter().enumerate() {
            node.write_config(i + 1, &cluster, &address, run_as, settings)?;
        }
        galera.start_node(0, true)?;
        galera.query(0, "CREATE DATABASE IF NOT EXISTS test")?;
        for i in 1..nodes {
            galera.start_node(i, false)?;
        }
        Ok(galera)
    }

    /// How many nodes it has.
    pub fn nodes(&self) -> usize {
        self.nodes.len()
    }

    /// The URL of node `node`: `mysql://root@127.0.0.1:PORT/test`.
    ///
    /// # Panics
    ///
    /// When there is no node `node`.
    pub fn url(&self, node: usize) -> String {
        format!(
            "mysql://root@127.0.0.1:{}/test",
            self.nodes[node].ports.client
        )
    }

    /// The client address of node `node`, for a relay.
    ///
    /// # Panics
    ///
    /// When there is no node `node`.
    pub fn address(&self, node: usize) -> SocketAddr {
        SocketAddr::from(([127, 0, 0, 1], self.nodes[node].ports.client))
    }

    /// The folder of node `node`: its `my.cnf`, `data`, `server.log`.
    ///
    /// # Errors
    ///
    /// When there is no node `node`.
    pub fn folder(&self, node: usize) -> Result<&Path, String> {
        Ok(&self.node(node)?.process.daemon.folder)
    }

    /// Runs `sql` on node `node` with the `mariadb` client and returns what it printed
    /// (tab-separated, no column names, trimmed).
    ///
    /// # Errors
    ///
    /// When the node does not answer, or a statement fails (the client's message: `ERROR 1047
    /// (08S01) … WSREP has not yet prepared node for application use` on a node outside the
    /// primary component).
    pub fn query(&self, node: usize, sql: &str) -> Result<String, String> {
        let port = self.node(node)?.ports.client;
        let mut client = Command::new(&self.programs.client);
        client
            .args(["--no-defaults", "--protocol=TCP", "-h", "127.0.0.1"])
            .args(["-P", &port.to_string(), "-u", "root", "-N", "-B"])
            .args(["--connect-timeout=10", "-e", sql]);
        output(&mut client).map_err(|e| format!("node {node}: {e}"))
    }

    /// The value of the status variable `name` on node `node` (`wsrep_local_state_comment`,
    /// `wsrep_cluster_status`, `wsrep_local_cert_failures`, …).
    ///
    /// # Errors
    ///
    /// When the node does not answer, or has no such variable.
    pub fn status(&self, node: usize, name: &str) -> Result<String, String> {
        let row = self.query(node, &format!("SHOW GLOBAL STATUS LIKE '{name}'"))?;
        row.split_once('\t')
            .map(|(_, value)| value.trim().to_owned())
            .ok_or_else(|| format!("node {node}: no status variable {name}"))
    }

    /// Whether node `node` is synced, in the primary component and ready for clients.
    ///
    /// # Errors
    ///
    /// When it does not answer.
    pub fn is_synced(&self, node: usize) -> Result<bool, String> {
        Ok(self.status(node, "wsrep_local_state_comment")? == "Synced"
            && self.status(node, "wsrep_cluster_status")? == "Primary"
            && self.status(node, "wsrep_ready")? == "ON")
    }

    /// Waits until node `node` is synced and in the primary component ([`is_synced`]).
    ///
    /// [`is_synced`]: Self::is_synced
    ///
    /// # Errors
    ///
    /// When it is not within 60 s.
    pub fn wait_synced(&self, node: usize) -> Result<(), String> {
        wait_for(&format!("Galera node {node} synced"), || {
            Ok(self.is_synced(node)?.then_some(()))
        })
    }

    /// Whether node `node`'s process runs.
    ///
    /// # Errors
    ///
    /// When there is no node `node`.
    pub fn is_running(&mut self, node: usize) -> Result<bool, String> {
        Ok(self.node_mut(node)?.process.is_running())
    }

    /// Kills node `node` with SIGKILL (its whole process group), as a crash.
    ///
    /// # Errors
    ///
    /// When it is not running.
    pub fn kill(&mut self, node: usize) -> Result<(), String> {
        self.node_mut(node)?.process.kill()
    }

    /// Starts node `node` again and waits until it has joined the cluster and is synced: it
    /// starts from the position it recovers from its storage (as `galera_recovery` does), so
    /// that it gets what it missed by an incremental transfer (IST) when a donor still has it,
    /// else by a full one (SST, `rsync`).
    ///
    /// # Errors
    ///
    /// When it is running, or does not start or sync within 60 s each.
    pub fn rejoin(&mut self, node: usize) -> Result<(), String> {
        self.start_node(node, false)
    }

    /// Kills every node that runs with SIGKILL, at once, as a power cut would.
    ///
    /// # Errors
    ///
    /// Never, so far (a node already down is left as it is).
    pub fn kill_all(&mut self) -> Result<(), String> {
        for node in &mut self.nodes {
            if node.process.is_running() {
                node.process.kill()?;
            }
        }
        Ok(())
    }

    /// After [`kill_all`](Self::kill_all): bootstraps a new primary component from node `node`
    /// (`safe_to_bootstrap: 1` in its `grastate.dat`, started with `--wsrep-new-cluster` from
    /// its recovered position), then rejoins every other node that is down.
    ///
    /// # Errors
    ///
    /// When a node still runs, or a node does not start or sync.
    pub fn bootstrap_from(&mut self, node: usize) -> Result<(), String> {
        for i in 0..self.nodes.len() {
            if self.nodes[i].process.is_running() {
                return Err(format!("node {i} still runs: kill every node first"));
            }
        }
        self.node(node)?.mark_safe_to_bootstrap()?;
        self.start_node(node, true)?;
        for i in 0..self.nodes.len() {
            if i != node {
                self.start_node(i, false)?;
            }
        }
        Ok(())
    }

    /// The node that is furthest in the cluster's history (the highest seqno recovered with
    /// `mariadbd --wsrep-recover`, or saved in `grastate.dat`), the lowest-numbered of equals;
    /// every node must be down.
    ///
    /// # Errors
    ///
    /// When a node runs, or a position cannot be recovered.
    pub fn most_advanced(&self) -> Result<usize, String> {
        let positions = self.positions()?;
        let mut best: Option<(usize, i64)> = None;
        for (i, position) in positions.iter().enumerate() {
            if best.is_none_or(|(_, seqno)| position.seqno > seqno) {
                best = Some((i, position.seqno));
            }
        }
        best.map(|(i, _)| i)
            .ok_or_else(|| "the cluster has no node".to_owned())
    }

    /// The seqno each node reached (see [`most_advanced`](Self::most_advanced)); every node
    /// must be down.
    ///
    /// # Errors
    ///
    /// As [`most_advanced`](Self::most_advanced).
    pub fn seqnos(&self) -> Result<Vec<i64>, String> {
        Ok(self.positions()?.into_iter().map(|p| p.seqno).collect())
    }

    /// Cuts node `node` from the group: its group connections are closed and new ones refused
    /// (`gmcast.isolate=1`), the way Galera's own tests make a partition. The others go on as
    /// the primary component (with a majority); the node is left alone, outside it, and refuses
    /// clients' statements (`ERROR 1047`). Waits until the node has seen that, and every other
    /// running node has left it out of its view (the group's suspect timeout, about 3 s).
    ///
    /// # Errors
    ///
    /// When the setting is refused, or the views have not changed after 60 s.
    pub fn isolate(&self, node: usize) -> Result<(), String> {
        let size: usize = self
            .status(node, "wsrep_cluster_size")?
            .parse()
            .map_err(|e| format!("node {node}: wsrep_cluster_size: {e}"))?;
        self.query(
            node,
            "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'",
        )?;
        wait_for(
            &format!("Galera node {node} out of the primary component"),
            || Ok((self.status(node, "wsrep_cluster_status")? != "Primary").then_some(())),
        )?;
        let others =
            (0..self.nodes.len()).filter(|&i| i != node && self.nodes[i].process.was_started());
        for other in others {
            self.wait_cluster_size(other, size - 1)?;
        }
        Ok(())
    }

    /// Waits until node `node` is in a primary component of `size` nodes.
    ///
    /// # Errors
    ///
    /// When it is not within 60 s.
    pub fn wait_cluster_size(&self, node: usize, size: usize) -> Result<(), String> {
        wait_for(
            &format!("Galera node {node} in a primary component of {size}"),
            || {
                Ok(
                    (self.status(node, "wsrep_cluster_size")? == size.to_string()
                        && self.status(node, "wsrep_cluster_status")? == "Primary")
                        .then_some(()),
                )
            },
        )
    }

    /// Heals [`isolate`](Self::isolate): node `node` reconnects to the group
    /// (`gmcast.isolate=0`) and is waited for until synced.
    ///
    /// # Errors
    ///
    /// When the setting is refused, or the node is not synced within 60 s.
    pub fn reconnect(&self, node: usize) -> Result<(), String> {
        self.query(
            node,
            "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'",
        )?;
        self.wait_synced(node)
    }

    /// Brings the cluster back whole after a test that broke it: every node down is rejoined
    /// (or, when all are down, the cluster is bootstrapped from the most advanced), an isolated
    /// node is reconnected, and every node is waited for until synced.
    ///
    /// # Errors
    ///
    /// When a node does not come back.
    pub fn heal(&mut self) -> Result<(), String> {
        let running: Vec<bool> = self
            .nodes
            .iter_mut()
            .map(|node| node.process.is_running())
            .collect();
        if !running.contains(&true) {
            let from = self.most_advanced()?;
            return self.bootstrap_from(from);
        }
        for (i, running) in running.into_iter().enumerate() {
            if !running {
                self.rejoin(i)?;
            } else if !self.is_synced(i).unwrap_or(false) {
                let _ = self.query(i, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'");
                self.wait_synced(i)?;
            }
        }
        Ok(())
    }

    /// `gcomm://` and every node's group address.
    fn cluster_address(&self) -> String {
        let peers: Vec<String> = self
            .nodes
            .iter()
            .map(|node| format!("127.0.0.1:{}", node.ports.group))
            .collect();
        format!("gcomm://{}", peers.join(","))
    }

    /// Starts node `i` (a new primary component when `bootstrap`, else joining the others) from
    /// its recovered position, and waits until it is synced.
    fn start_node(&mut self, i: usize, bootstrap: bool) -> Result<(), String> {
        let server = self.programs.server.clone();
        let node = self.node_mut(i)?;
        if node.process.is_running() {
            return Err(format!("{} is running already", node.process.daemon.name));
        }
        let mut extra = Vec::new();
        // A node never started has no position: it gets everything by a state transfer.
        if !node.grastate()?.is_empty() {
            extra.push(node.position(&server)?.start_argument());
        }
        if bootstrap {
            extra.push("--wsrep-new-cluster".into());
        }
        node.start(&extra)?;
        self.wait_synced(i)
    }

    /// Every node's position; every node must be down.
    fn positions(&self) -> Result<Vec<Position>, String> {
        let server = &self.programs.server;
        std::thread::scope(|scope| {
            let threads: Vec<_> = self
                .nodes
                .iter()
                .map(|node| {
                    scope.spawn(move || match node.process.was_started() {
                        true => Err(format!("{} runs: kill it first", node.process.daemon.name)),
                        false => node.position(server),
                    })
                })
                .collect();
            threads
                .into_iter()
                .map(|thread| thread.join().unwrap_or_else(|_| Err("panicked".into())))
                .collect()
        })
    }

    /// Node `i`, or says there is none.
    fn node(&self, i: usize) -> Result<&Node, String> {
        Ok(&self.nodes[process::member(self.nodes.len(), i, NODE)?])
    }

    /// Node `i`, to start or kill, or says there is none.
    fn node_mut(&mut self, i: usize) -> Result<&mut Node, String> {
        let i = process::member(self.nodes.len(), i, NODE)?;
        Ok(&mut self.nodes[i])
    }
}

/// Ports for `nodes` nodes, four each, all different (a free port is found by binding port 0
/// and letting it go: two lookups could get the same one).
fn distinct_ports(nodes: usize) -> Result<Vec<Ports>, String> {
    let mut taken = std::collections::HashSet::new();
    let mut next = || -> Result<u16, String> {
        for _ in 0..100 {
            let port = free_port()?;
            if taken.insert(port) {
                return Ok(port);
            }
        }
        Err("no free port found".into())
    };
    (0..nodes)
        .map(|_| {
            Ok(Ports {
                client: next()?,
                group: next()?,
                ist: next()?,
                sst: next()?,
            })
        })
        .collect()
}
