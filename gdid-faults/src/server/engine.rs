//! [`Engine`]: how each database's private instance is found on this machine, given a data folder
//! of its own, and launched on its own port.

use std::ffi::OsString;
use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// A database the suite runs a private instance of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Engine {
    /// MariaDB: `mariadbd`, its data folder made by `mariadb-install-db`.
    MariaDb,
    /// PostgreSQL: `postgres`, its data folder made by `initdb` (`/usr/lib/postgresql/*/bin`,
    /// or `GDID_PG_BINDIR`).
    Postgres,
    /// The MongoDB-protocol test server of `scripts/mongodb-test-server.sh` (built once).
    MongoDb,
}

impl Engine {
    /// Every engine, in the order the suite runs them.
    pub const ALL: [Engine; 3] = [Engine::MariaDb, Engine::Postgres, Engine::MongoDb];

    /// Its name in rows and messages.
    pub fn name(self) -> &'static str {
        match self {
            Engine::MariaDb => "MariaDB",
            Engine::Postgres => "PostgreSQL",
            Engine::MongoDb => "MongoDB",
        }
    }

    /// The folder of its instance inside the run's folder.
    pub(crate) fn folder(self) -> &'static str {
        match self {
            Engine::MariaDb => "mariadb",
            Engine::Postgres => "postgres",
            Engine::MongoDb => "mongodb",
        }
    }

    /// The signal that shuts it down cleanly and quickly (PostgreSQL: SIGINT, its fast shutdown;
    /// SIGTERM would wait for every client to leave).
    pub(crate) fn stop_signal(self) -> &'static str {
        match self {
            Engine::Postgres => "INT",
            Engine::MariaDb | Engine::MongoDb => "TERM",
        }
    }

    /// Whether the instance on 127.0.0.1:`port` serves clients. MariaDB listens before it is
    /// ready, and a stop signal in between is lost for good (10.11: the server hangs in its
    /// start-up), so for MariaDB this waits for its greeting, which only a ready server sends;
    /// the others are ready once they accept a connection.
    pub(crate) fn serves(self, port: u16) -> bool {
        let Ok(mut connection) = TcpStream::connect(("127.0.0.1", port)) else {
            return false;
        };
        match self {
            Engine::MariaDb => {
                let mut greeting = [0u8; 1];
                connection
                    .set_read_timeout(Some(Duration::from_secs(1)))
                    .is_ok()
                    && connection.read(&mut greeting).is_ok_and(|n| n == 1)
            }
            Engine::Postgres | Engine::MongoDb => true,
        }
    }

    /// Its programs on this machine; `Err` says why it is not installed.
    pub(crate) fn find(self) -> Result<Programs, String> {
        match self {
            Engine::MariaDb => {
                let server = program("mariadbd", &["/usr/sbin/mariadbd"])?;
                let install_db = program("mariadb-install-db", &[])?;
                Ok(Programs::MariaDb { server, install_db })
            }
            Engine::Postgres => Ok(Programs::Postgres {
                bindir: postgres_bindir()?,
            }),
            Engine::MongoDb => Ok(Programs::MongoDb {
                server: mongodb_test_server()?,
            }),
        }
    }
}

/// An engine's programs, found by [`Engine::find`].
#[derive(Debug, Clone)]
pub(crate) enum Programs {
    MariaDb {
        server: PathBuf,
        install_db: PathBuf,
    },
    Postgres {
        bindir: PathBuf,
    },
    MongoDb {
        server: PathBuf,
    },
}

/// Who the servers run as: as root, MariaDB and PostgreSQL run as their own users (`mysql`,
/// `postgres`: both refuse root), owning their folders.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RunAs {
    /// The user running the suite.
    Me,
    /// Root, switching to each engine's service user.
    ServiceUsers,
}

impl RunAs {
    /// Who the servers of this process run as: the service users when it is root.
    pub(crate) fn here() -> RunAs {
        if std::fs::metadata("/proc/self").is_ok_and(|m| m.uid() == 0) {
            RunAs::ServiceUsers
        } else {
            RunAs::Me
        }
    }

    /// Gives `folder` to `user` (and its group of the same name) when the servers run as the
    /// service users.
    pub(crate) fn give(self, user: &str, folder: &Path) -> Result<(), String> {
        if self == RunAs::Me {
            return Ok(());
        }
        let mut chown = Command::new("chown");
        chown.arg("-R").arg(format!("{user}:{user}")).arg(folder);
        run(&mut chown, &folder.join("chown.log"))
    }

    /// MariaDB's `--user=mysql` when it runs as its service user, for its install and its
    /// server alike.
    fn mariadb_user(self) -> Option<OsString> {
        (self == RunAs::ServiceUsers).then(|| "--user=mysql".into())
    }
}

/// How to start an instance once its data folder exists: the command, and the URL clients use.
#[derive(Debug, Clone)]
pub(crate) struct Launch {
    pub(crate) program: PathBuf,
    pub(crate) args: Vec<OsString>,
    pub(crate) url: String,
}

impl Programs {
    /// Whose programs they are.
    pub(crate) fn engine(&self) -> Engine {
        match self {
            Programs::MariaDb { .. } => Engine::MariaDb,
            Programs::Postgres { .. } => Engine::Postgres,
            Programs::MongoDb { .. } => Engine::MongoDb,
        }
    }

    /// Makes the instance's data folder in `folder` (which exists and is empty) and says how to
    /// start it on 127.0.0.1:`port` ([`Programs::launch`]).
    ///
    /// MariaDB gets a temporary folder of its own (`tmp` in `folder`), for its installation
    /// (`TMPDIR`) and its running (`--tmpdir`): `mariadb-install-db` run by several processes at
    /// once with the same temporary folder (`/tmp`) fails now and then (`ERROR: 1051 Unknown
    /// table 'mysql.tmp_user_sys'`).
    pub(crate) fn init(&self, folder: &Path, port: u16, run_as: RunAs) -> Result<Launch, String> {
        let data = folder.join("data");
        match self {
            Programs::MariaDb { install_db, .. } => {
                let tmp = folder.join("tmp");
                make_folder(&tmp)?;
                run_as.give("mysql", folder)?;
                // `--no-defaults`: nothing of the machine's /etc/mysql (its port, socket, data).
                let mut install = Command::new(install_db);
                install
                    .arg("--no-defaults")
                    .arg(arg("--datadir=", &data))
                    .args(run_as.mariadb_user())
                    .arg("--auth-root-authentication-method=normal")
                    .env("TMPDIR", &tmp);
                run(&mut install, &folder.join("install.log"))?;
            }
            Programs::Postgres { bindir } => {
                run_as.give("postgres", folder)?;
                let (program, args) = as_user(run_as, "postgres", bindir.join("initdb"));
                let mut init = Command::new(program);
                init.args(args)
                    .arg("-D")
                    .arg(&data)
                    .args(["-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C"])
                    .arg("--no-sync");
                run(&mut init, &folder.join("initdb.log"))?;
            }
            Programs::MongoDb { .. } => {
                std::fs::create_dir_all(&data).map_err(|e| format!("{}: {e}", data.display()))?;
            }
        }
        Ok(self.launch(folder, port, run_as))
    }

    /// How to start the instance whose data folder is `data` in `folder` (made by
    /// [`Programs::init`], or a copy of another instance's) on 127.0.0.1:`port`, its socket in
    /// `folder`.
    pub(crate) fn launch(&self, folder: &Path, port: u16, run_as: RunAs) -> Launch {
        let data = folder.join("data");
        match self {
            Programs::MariaDb { server, .. } => {
                // `--no-defaults` first: nothing of the machine's /etc/mysql.
                let mut args = vec![OsString::from("--no-defaults")];
                args.extend([
                    arg("--datadir=", &data),
                    arg("--socket=", &folder.join("mysqld.sock")),
                    arg("--pid-file=", &folder.join("mariadbd.pid")),
                    arg("--tmpdir=", &folder.join("tmp")),
                    format!("--port={port}").into(),
                    "--bind-address=127.0.0.1".into(),
                    "--skip-name-resolve".into(),
                    // Any client, no password: the instance lives for the suite on loopback only.
                    "--skip-grant-tables".into(),
                ]);
                args.extend(run_as.mariadb_user());
                Launch {
                    program: server.clone(),
                    args,
                    url: format!("mysql://root@127.0.0.1:{port}/test"),
                }
            }
            Programs::Postgres { bindir } => {
                let (program, mut args) = as_user(run_as, "postgres", bindir.join("postgres"));
                args.extend([
                    "-D".into(),
                    data.into_os_string(),
                    "-p".into(),
                    port.to_string().into(),
                    "-k".into(),
                    folder.as_os_str().to_owned(),
                    "-c".into(),
                    "listen_addresses=127.0.0.1".into(),
                ]);
                Launch {
                    program,
                    args,
                    url: format!("postgres://postgres@127.0.0.1:{port}/postgres"),
                }
            }
            Programs::MongoDb { server } => Launch {
                program: server.clone(),
                args: vec![
                    "--host".into(),
                    "127.0.0.1".into(),
                    "--port".into(),
                    port.to_string().into(),
                    "--storage-path".into(),
                    data.into_os_string(),
                    "--cache-size".into(),
                    "256M".into(),
                ],
                url: format!("mongodb://127.0.0.1:{port}/?directConnection=true"),
            },
        }
    }
}

/// Makes `folder` (and its parents), open to the servers' users (`0755`).
pub(crate) fn make_folder(folder: &Path) -> Result<(), String> {
    std::fs::create_dir_all(folder)
        .and_then(|()| std::fs::set_permissions(folder, std::fs::Permissions::from_mode(0o755)))
        .map_err(|e| format!("{}: {e}", folder.display()))
}

/// A port on 127.0.0.1 that nothing listens on now.
pub(crate) fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .map_err(|e| format!("finding a free port: {e}"))
}

/// `name=` followed by a path, as one argument.
fn arg(name: &str, path: &Path) -> OsString {
    let mut arg = OsString::from(name);
    arg.push(path);
    arg
}

/// `program` run as `user` when the suite runs as root (`setpriv`, which executes it in place,
/// so the process id is the program's), else as it is: the program and the arguments before
/// its own.
pub(crate) fn as_user(run_as: RunAs, user: &str, program: PathBuf) -> (PathBuf, Vec<OsString>) {
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

/// Runs `command` to its end, its output in `log`; `Err` with the output's end when it fails.
fn run(command: &mut Command, log: &Path) -> Result<(), String> {
    let file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let status = command
        .stdin(std::process::Stdio::null())
        .stdout(file.try_clone().map_err(|e| e.to_string())?)
        .stderr(file)
        .status()
        .map_err(|e| format!("{command:?}: {e}"))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("{command:?}: {status}; {}", tail(log)))
    }
}

/// The last lines of the log file `log`, for an error message.
pub(crate) fn tail(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    format!(
        "the end of {}:\n{}",
        log.display(),
        lines[lines.len().saturating_sub(15)..].join("\n")
    )
}

/// MariaDB's programs, found as the private servers find them, and its command-line client
/// (`mariadb`, or `mysql`) on the `PATH`: what the replica sets and the Galera clusters run.
pub(crate) fn mariadb_programs() -> Result<(Programs, PathBuf), String> {
    let programs = Engine::MariaDb.find()?;
    let client = program("mariadb", &[])
        .or_else(|_| program("mysql", &[]))
        .map_err(|_| "the mariadb client is not installed".to_owned())?;
    Ok((programs, client))
}

/// `name` on the `PATH`, or the first of `elsewhere` that exists.
fn program(name: &str, elsewhere: &[&str]) -> Result<PathBuf, String> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .chain(elsewhere.iter().map(PathBuf::from))
        .find(|candidate| candidate.is_file())
        .ok_or_else(|| format!("{name} is not installed"))
}

/// PostgreSQL's programs: `GDID_PG_BINDIR`, or the newest `/usr/lib/postgresql/*/bin` (Debian
/// keeps `initdb` and `postgres` there, off the `PATH`), or the `PATH`.
fn postgres_bindir() -> Result<PathBuf, String> {
    if let Some(dir) = std::env::var_os("GDID_PG_BINDIR") {
        return Ok(dir.into());
    }
    let mut versions: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let version = entry.file_name().to_str()?.parse().ok()?;
            let bin = entry.path().join("bin");
            bin.join("postgres").is_file().then_some((version, bin))
        })
        .collect();
    versions.sort();
    if let Some((_, bin)) = versions.pop() {
        return Ok(bin);
    }
    let initdb = program("initdb", &[])
        .map_err(|_| "PostgreSQL (initdb, postgres) is not installed".to_owned())?;
    Ok(initdb.parent().map(Path::to_path_buf).unwrap_or_default())
}

/// The MongoDB-protocol test server's binary: `scripts/mongodb-test-server.sh bin` (which
/// builds it on first use).
fn mongodb_test_server() -> Result<PathBuf, String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/mongodb-test-server.sh");
    let output = Command::new(&script)
        .arg("bin")
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("{}: {e}", script.display()))?;
    let path = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    if output.status.success() && Path::new(&path).is_file() {
        Ok(path.into())
    } else {
        Err(format!(
            "the MongoDB test server is not available ({} bin: {})",
            script.display(),
            output.status
        ))
    }
}
