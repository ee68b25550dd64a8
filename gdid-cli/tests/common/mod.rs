//! What the CLI tests share: running the real `gdid` binary and reading what it printed.
// Each test binary uses only some of these.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};

/// Runs `gdid` with `args` in the temporary folder, so that no default store lands in the
/// sources.
pub(crate) fn gdid(args: &[&str]) -> Output {
    gdid_in(&std::env::temp_dir(), args)
}

/// Runs `gdid` with `args` in `dir` (where its default store goes).
pub(crate) fn gdid_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gdid"))
        .args(args)
        .env_remove("GDID_STORE")
        .current_dir(dir)
        .output()
        .expect("the gdid binary runs")
}

/// Runs `gdid` with `args` as [`gdid`] does, with the environment variables `env` set.
pub(crate) fn gdid_with_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gdid"))
        .args(args)
        .env_remove("GDID_STORE")
        .envs(env.iter().copied())
        .current_dir(std::env::temp_dir())
        .output()
        .expect("the gdid binary runs")
}

/// Runs `gdid` with `args` as [`gdid`] does, `stdin` written to its standard input.
pub(crate) fn gdid_with_stdin(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gdid"))
        .args(args)
        .env_remove("GDID_STORE")
        .current_dir(std::env::temp_dir())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the gdid binary runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    child.wait_with_output().unwrap()
}

/// What the run printed on stdout.
pub(crate) fn stdout(output: &Output) -> &str {
    std::str::from_utf8(&output.stdout).unwrap()
}

/// What the run printed on stderr.
pub(crate) fn stderr(output: &Output) -> &str {
    std::str::from_utf8(&output.stderr).unwrap()
}

/// The first line `child` printed on its (piped) stdout, trimmed: read before it is waited on.
pub(crate) fn first_line(child: &mut Child) -> String {
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("a piped stdout"))
        .read_line(&mut line)
        .expect("reading the first line");
    line.trim().to_owned()
}

/// `gdid ARGS` (a `gdid serve …`) started, its stderr sent to `stderr`, and the URL it printed.
pub(crate) fn serve(args: &[&str], stderr: Stdio) -> (KillOnDrop, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gdid"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("the gdid binary runs");
    let url = first_line(&mut child);
    (KillOnDrop(child), url)
}

/// A child process (a `gdid serve`, say), killed if a failing test drops it still running.
pub(crate) struct KillOnDrop(pub Child);

impl KillOnDrop {
    /// Sends SIGTERM and waits: the exit status.
    pub(crate) fn terminate(&mut self) -> std::process::ExitStatus {
        let pid = self.0.id().to_string();
        let sent = Command::new("kill").args(["-TERM", &pid]).status();
        assert!(sent.is_ok_and(|s| s.success()), "kill -TERM {pid}");
        self.0.wait().expect("waiting for the process")
    }
}

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if matches!(self.0.try_wait(), Ok(None)) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
}
