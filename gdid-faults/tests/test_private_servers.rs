//! The fault suite's private servers: they start, stop and start again on their own ports, and
//! a run leaves nothing behind, not even after an earlier run was killed; the machine's own
//! servers are never touched.

use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::Command;

use gdid_faults::server::{Engine, PrivateServers, machine_servers, machine_servers_to_keep};
use gdid_faults::url::ServerUrl;

/// The address a server's URL names.
fn address(url: &str) -> SocketAddr {
    ServerUrl::parse(url).unwrap().address().unwrap()
}

fn accepts(url: &str) -> bool {
    TcpStream::connect(address(url)).is_ok()
}

/// Whether any process runs from `folder` (names it on its command line).
fn runs_from(folder: &Path) -> bool {
    let folder = folder.to_string_lossy();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|entry| {
            entry
                .file_name()
                .to_str()
                .is_some_and(|n| n.parse::<u32>().is_ok())
        })
        .any(|entry| {
            let command = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            String::from_utf8_lossy(&command).contains(&*folder)
        })
}

#[test]
fn private_servers_stop_and_start_and_leave_nothing_behind_even_after_a_killed_run() {
    // What a killed run leaves: its folder, named after a process that is gone, and a server
    // still running from it.
    let mut gone = Command::new("true").spawn().unwrap();
    let gone_pid = gone.id();
    gone.wait().unwrap();
    let leftover = PrivateServers::root().join(format!("run-{gone_pid}"));
    std::fs::create_dir_all(leftover.join("mariadb")).unwrap();
    let mut orphan = Command::new("bash")
        .args(["-c", "trap 'exit 0' TERM; while :; do sleep 0.1; done"])
        .arg(&leftover)
        .spawn()
        .unwrap();
    std::fs::write(
        leftover.join("mariadb/server.pid"),
        format!("{} TERM\n", orphan.id()),
    )
    .unwrap();
    let machine = machine_servers_to_keep();

    let servers = PrivateServers::start().unwrap();
    assert!(!leftover.exists(), "{} is left", leftover.display());
    assert!(
        orphan.try_wait().unwrap().is_some(),
        "the leftover server runs on"
    );

    for engine in Engine::ALL {
        let server = match servers.get(engine) {
            Ok(server) => server,
            Err(why) => {
                gdid_testkit::unavailable(engine.name(), why);
                continue;
            }
        };
        gdid_testkit::ran(engine.name());
        let url = server.url();
        assert!(accepts(url), "{} is not up at {url}", engine.name());
        let stopped = server.stop().unwrap();
        assert!(!accepts(url), "{} still accepts at {url}", engine.name());
        stopped.start().unwrap();
        assert!(accepts(url), "{} is not up again at {url}", engine.name());
        // The guard starts it again if the scenario fails before it does.
        drop(server.stop().unwrap());
        assert!(
            accepts(url),
            "{} was not started again on drop",
            engine.name()
        );
    }

    let folder = servers.folder().to_owned();
    assert!(runs_from(&folder));
    drop(servers);
    assert!(!folder.exists(), "{} is left", folder.display());
    assert!(
        !runs_from(&folder),
        "a server of {} runs on",
        folder.display()
    );
    let after = machine_servers();
    for pid in &machine {
        assert!(
            after.contains(pid),
            "the machine's database server {pid} stopped: before {machine:?}, after {after:?}"
        );
    }
}
