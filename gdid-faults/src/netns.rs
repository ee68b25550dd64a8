//! Hosts on one machine, for partitions: network namespaces joined by veth pairs, each end with
//! an address, whose links a test cuts (an interface down) and heals. The machine's own network
//! is left alone: a link to the machine's namespace (the database host here) has its own
//! addresses, on its own veth. (Delay and loss are a relay's, [`FaultProxy`](crate::FaultProxy):
//! `tc netem` is missing from some kernels, this machine's among them.)
//!
//! Everything is made with iproute2's `ip` (root is needed) and named after the running
//! process, `gdp<PID><tag>`, so that a [`Network`] removes its own namespaces when dropped (also
//! after a panic; the processes started in them are the caller's to stop first) and the next one
//! removes those that a killed run left behind (their process gone), with what still runs in
//! them. Deleting a namespace deletes the veth ends in it, and with them their peers.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Command;

/// The prefix of every namespace made here.
const PREFIX: &str = "gdp";

/// Runs `program` with `args` to its end; `Err` with what it printed when it fails.
fn run(program: &str, args: &[&str]) -> Result<String, String> {
    let output = Command::new(program)
        .args(args)
        .output()
        .map_err(|e| format!("{program}: {e}"))?;
    if output.status.success() {
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    } else {
        Err(format!(
            "{program} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&output.stderr).trim()
        ))
    }
}

/// A set of network namespaces and the links between them (and the machine's namespace).
#[derive(Debug)]
pub struct Network {
    /// `gdp<PID>`: every namespace and interface name starts with it.
    name: String,
    namespaces: Vec<String>,
    /// Interfaces made in the machine's namespace (deleted with their namespaced peers, and
    /// here too in case a peer was never moved).
    machine_links: Vec<String>,
}

impl Network {
    /// Whether namespaces can be made here: `ip` is installed and this process may use it
    /// (root).
    ///
    /// # Errors
    ///
    /// Why not.
    pub fn available() -> Result<(), String> {
        run("ip", &["netns", "list"])?;
        let name = format!("{PREFIX}{}probe", std::process::id());
        run("ip", &["netns", "add", &name])?;
        run("ip", &["netns", "del", &name]).map(drop)
    }

    /// A new, empty network of this process, after removing the namespaces of runs whose
    /// process is gone, and killing what ran in them.
    ///
    /// # Errors
    ///
    /// When `ip netns` cannot be listed.
    pub fn new() -> Result<Network, String> {
        for stale in run("ip", &["netns", "list"])?
            .lines()
            .filter_map(|line| line.split_whitespace().next())
            .filter(|name| is_stale(name))
        {
            // Its processes first: a namespace deleted keeps those running in it.
            for pid in run("ip", &["netns", "pids", stale])
                .unwrap_or_default()
                .lines()
            {
                let _ = run("kill", &["-KILL", pid.trim()]);
            }
            let _ = run("ip", &["netns", "del", stale]);
        }
        Ok(Network {
            name: format!("{PREFIX}{}", std::process::id()),
            namespaces: Vec::new(),
            machine_links: Vec::new(),
        })
    }

    /// Adds a namespace (a host) named `tag` (a letter or two), its loopback up; returns its
    /// full name, for [`exec`](Self::exec).
    ///
    /// # Errors
    ///
    /// When `ip` fails.
    pub fn host(&mut self, tag: &str) -> Result<String, String> {
        let name = format!("{}{tag}", self.name);
        run("ip", &["netns", "add", &name])?;
        self.namespaces.push(name.clone());
        run("ip", &["-n", &name, "link", "set", "lo", "up"])?;
        Ok(name)
    }

    /// Joins `a` and `b` (namespaces of [`host`](Self::host), or `None` for the machine's) by a
    /// veth pair: end `a_tag` in `a` with `a_address` (`10.201.1.1/30`), end `b_tag` in `b`
    /// with `b_address`, both up. Interface names are `gdp<PID><tag>` (15 bytes at most).
    ///
    /// # Errors
    ///
    /// When `ip` fails.
    pub fn link(
        &mut self,
        (a, a_tag, a_address): (Option<&str>, &str, &str),
        (b, b_tag, b_address): (Option<&str>, &str, &str),
    ) -> Result<(), String> {
        let (a_name, b_name) = (self.interface(a_tag), self.interface(b_tag));
        run(
            "ip",
            &[
                "link", "add", &a_name, "type", "veth", "peer", "name", &b_name,
            ],
        )?;
        for (namespace, interface, address) in [(a, &a_name, a_address), (b, &b_name, b_address)] {
            match namespace {
                Some(namespace) => {
                    run("ip", &["link", "set", interface, "netns", namespace])?;
                    run(
                        "ip",
                        &["-n", namespace, "addr", "add", address, "dev", interface],
                    )?;
                    run("ip", &["-n", namespace, "link", "set", interface, "up"])?;
                }
                None => {
                    self.machine_links.push(interface.clone());
                    run("ip", &["addr", "add", address, "dev", interface])?;
                    run("ip", &["link", "set", interface, "up"])?;
                }
            }
        }
        Ok(())
    }

    /// The full name of the interface `tag`.
    pub fn interface(&self, tag: &str) -> String {
        format!("{}{tag}", self.name)
    }

    /// Takes interface `tag` (in `namespace`, or the machine's) down, or up again: a cut link,
    /// healed.
    ///
    /// # Errors
    ///
    /// When `ip` fails.
    pub fn set_up(&self, namespace: Option<&str>, tag: &str, up: bool) -> Result<(), String> {
        let interface = self.interface(tag);
        let state = if up { "up" } else { "down" };
        match namespace {
            Some(namespace) => run("ip", &["-n", namespace, "link", "set", &interface, state]),
            None => run("ip", &["link", "set", &interface, state]),
        }
        .map(drop)
    }

    /// A command that runs `program` in `namespace` (`ip netns exec`, which becomes the
    /// program: its pid is the program's).
    pub fn exec(&self, namespace: &str, program: impl AsRef<OsStr>) -> Command {
        let mut command = Command::new("ip");
        command
            .args(["netns", "exec", namespace])
            .arg(program.as_ref());
        command
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        for namespace in self.namespaces.drain(..) {
            if let Err(e) = run("ip", &["netns", "del", &namespace]) {
                eprintln!("gdid-faults: {e}");
            }
        }
        for interface in self.machine_links.drain(..) {
            // Gone with its peer's namespace, normally.
            let _ = run("ip", &["link", "del", &interface]);
        }
    }
}

/// Whether `name` is a namespace of a run of this module whose process is gone.
fn is_stale(name: &str) -> bool {
    let Some(rest) = name.strip_prefix(PREFIX) else {
        return false;
    };
    let pid: String = rest.chars().take_while(char::is_ascii_digit).collect();
    !pid.is_empty()
        && pid != std::process::id().to_string()
        && !Path::new("/proc").join(&pid).exists()
}
