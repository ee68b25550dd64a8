//! [`machine_servers`]: the machine's own database servers, which the suite must leave running.

use super::PrivateServers;

/// The process ids of the machine's database servers, sorted: every `mariadbd`, and every
/// `postgres` whose parent is not a `postgres` and whose command line is not a backend's
/// (`postgres: …`): a cluster's postmaster, not its workers; except the suite's private servers
/// (run from [`PrivateServers::root`]). Empty where `/proc` cannot be
/// read.
pub fn machine_servers() -> Vec<u32> {
    let private = PrivateServers::root();
    let private = private.to_string_lossy();
    let processes: Vec<(u32, String, u32)> = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let pid = entry.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            let (name, ppid) = name_and_parent(&stat)?;
            // A zombie is no server: the backends of a private PostgreSQL server killed a moment
            // ago (each leads a session of its own, so a group kill misses them) wait there for
            // init to reap them, their parent init and their command line empty.
            (!is_zombie(&stat)).then_some((pid, name, ppid))
        })
        .collect();
    let name_of = |pid: u32| {
        processes
            .iter()
            .find(|(p, _, _)| *p == pid)
            .map(|(_, name, _)| name.as_str())
    };
    let mut servers: Vec<u32> = processes
        .iter()
        .filter(|(_, name, ppid)| {
            name == "mariadbd" || (name == "postgres" && name_of(*ppid) != Some("postgres"))
        })
        .map(|(pid, _, _)| *pid)
        .filter(|pid| {
            let command = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
            let command = String::from_utf8_lossy(&command);
            // A backend names itself `postgres: …`: one whose postmaster was just killed (a
            // private server's) has init as its parent for a moment, and is no server.
            !command.contains(&*private) && !command.starts_with("postgres: ")
        })
        .collect();
    servers.sort_unstable();
    servers
}

/// [`machine_servers`], before a test that must leave them running.
///
/// # Panics
///
/// When none is found and `CI=true`: CI starts the machine's MariaDB and PostgreSQL
/// (`scripts/services.sh`), and a check that they kept running must not pass for want of a
/// server to check.
pub fn machine_servers_to_keep() -> Vec<u32> {
    let servers = machine_servers();
    if servers.is_empty() && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("no mariadbd or postgres process of the machine found, and CI=true");
    }
    servers
}

/// Whether a `/proc/PID/stat` line is a zombie's (state `Z`).
fn is_zombie(stat: &str) -> bool {
    stat.rsplit_once(") ")
        .is_some_and(|(_, rest)| rest.starts_with('Z'))
}

/// The name and the parent's id in a `/proc/PID/stat` line: `PID (NAME) STATE PPID …`.
fn name_and_parent(stat: &str) -> Option<(String, u32)> {
    let (_, rest) = stat.split_once(" (")?;
    let (name, rest) = rest.rsplit_once(") ")?;
    let ppid = rest.split(' ').nth(1)?.parse().ok()?;
    Some((name.to_owned(), ppid))
}

#[cfg(test)]
mod tests {
    use super::{is_zombie, name_and_parent};

    #[test]
    fn a_zombie_is_told_by_its_state() {
        assert!(is_zombie("11720 (postgres) Z 1 11720 11720 0 -1"));
        assert!(!is_zombie("2219 (postgres) S 1 2219 2219 0 -1"));
    }

    #[test]
    fn a_stat_line_gives_the_name_and_the_parent_even_with_spaces_and_parentheses() {
        assert_eq!(
            name_and_parent("2219 (postgres) S 1 2219 2219 0 -1"),
            Some(("postgres".to_owned(), 1))
        );
        assert_eq!(
            name_and_parent("42 (a (b) c) R 7 42 42"),
            Some(("a (b) c".to_owned(), 7))
        );
        assert_eq!(name_and_parent("garbage"), None);
    }
}
