//! `gdid serve` and `gdid token` as a user runs them: bad options and files refused with exit
//! status 2 and no secret printed, HTTPS with a certificate made here (trusted through
//! `SSL_CERT_FILE`), metrics, and SIGTERM.

mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::{KillOnDrop, first_line, gdid, gdid_with_env, stderr, stdout};
use gdid::Gdid;

const TOKEN: &str = "cli-serve-token-0123456789";

fn folder(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(gdid_testkit::fresh(name));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn tokens_file(dir: &Path, text: &str) -> String {
    let path = dir.join("tokens");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// `gdid serve --store STORE --tokens TOKENS MORE`.
fn serve_args<'a>(store: &'a str, tokens: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    [&["serve", "--store", store, "--tokens", tokens][..], more].concat()
}

/// `gdid ARGS` (a `gdid serve …`) started, its stderr kept for [`terminate`], and its URL.
fn serve(args: &[&str]) -> (KillOnDrop, String) {
    common::serve(args, Stdio::piped())
}

/// `gdid serve --store STORE --tokens TOKENS --listen 127.0.0.1:0 MORE` started, and its URL.
fn serve_on(store: &str, tokens: &str, more: &[&str]) -> (KillOnDrop, String) {
    let more = [&["--listen", "127.0.0.1:0"][..], more].concat();
    serve(&serve_args(store, tokens, &more))
}

/// Runs `gdid ARGS`: it must exit with status 2, say `says` on stderr and nothing on stdout.
fn assert_refused(args: &[&str], says: &str) -> Output {
    let output = gdid(args);
    assert_eq!(
        output.status.code(),
        Some(2),
        "{args:?}: {}",
        stderr(&output)
    );
    assert!(
        stderr(&output).contains(says),
        "{args:?}: {}",
        stderr(&output)
    );
    assert!(stdout(&output).is_empty(), "{args:?}: {}", stdout(&output));
    output
}

/// SIGTERM, then what the server said on stderr; it must exit 0.
fn terminate(mut running: KillOnDrop) -> String {
    let status = running.terminate();
    let mut said = String::new();
    let stderr = running.0.stderr.take().unwrap();
    std::io::BufReader::new(stderr)
        .read_to_string(&mut said)
        .unwrap();
    assert!(status.success(), "{status}: {said}");
    said
}

#[test]
fn bad_options_and_files_are_refused_with_status_2() {
    let dir = folder("cli_serve_bad");
    let store = gdid_testkit::sqlite_url("cli_serve_bad");
    let good = tokens_file(&dir, &format!("{TOKEN} shop\n"));
    let short = dir.join("short");
    std::fs::write(&short, "tooshort shop\nsecret-but-no-scope-0123456789\n").unwrap();
    let short = short.display().to_string();
    let missing = dir.join("missing").display().to_string();
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["serve", "--store", &store], "--tokens"),
        (serve_args(&store, &missing, &[]), "--tokens"),
        (serve_args(&store, &short, &[]), "tokens line 1"),
        (serve_args("memory", &good, &[]), "in a database"),
        (
            serve_args("http://127.0.0.1:1", &good, &[]),
            "in a database",
        ),
        (
            serve_args(&store, &good, &["--tls-cert", &good]),
            "--tls-key",
        ),
        (
            serve_args(&store, &good, &["--tls-cert", &good, "--tls-key", &good]),
            "the certificate",
        ),
        (
            serve_args(&store, &good, &["--listen", "nowhere"]),
            "--listen",
        ),
        (serve_args(&store, &good, &["--authority", "16"]), "16"),
        (
            serve_args(&store, &good, &["--max-count", "100001"]),
            "--max-count",
        ),
        (vec!["token", "--scopes", "shop,bad scope"], "--scopes"),
        (vec!["token"], "--scopes"),
    ];
    for (args, says) in cases {
        let output = assert_refused(&args, says);
        assert!(
            !stderr(&output).contains("secret-but"),
            "{}",
            stderr(&output)
        );
    }
}

#[test]
fn a_port_in_use_is_a_failure_not_bad_input() {
    let dir = folder("cli_serve_port");
    let store = gdid_testkit::sqlite_url("cli_serve_port");
    let tokens = tokens_file(&dir, &format!("{TOKEN} *\n"));
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let address = taken.local_addr().unwrap().to_string();
    let output = gdid(&serve_args(&store, &tokens, &["--listen", &address]));
    assert_eq!(output.status.code(), Some(1), "{}", stderr(&output));
    assert!(
        stderr(&output).contains("cannot listen"),
        "{}",
        stderr(&output)
    );
}

#[test]
fn a_new_token_works_at_once_and_its_file_line_holds_only_its_digest() {
    let dir = folder("cli_serve_token");
    let made = gdid(&["token", "--scopes", "shop"]);
    assert!(made.status.success(), "{}", stderr(&made));
    let lines: Vec<&str> = stdout(&made).lines().collect();
    let [token, line] = lines[..] else {
        panic!("{lines:?}")
    };
    assert!(token.starts_with("gdid_") && token.len() == 69, "{token}");
    assert!(line.starts_with("sha256:") && line.ends_with(" shop") && !line.contains(token));
    let store = gdid_testkit::sqlite_url("cli_serve_token");
    let tokens = tokens_file(&dir, line);
    let (server, url) = serve_on(&store, &tokens, &[]);
    let next = gdid_with_env(
        &["next", "--store", &url, "--scope", "shop", "--count", "3"],
        &[("GDID_TOKEN", token)],
    );
    assert!(next.status.success(), "{}", stderr(&next));
    assert_eq!(stdout(&next).lines().count(), 3);
    // Another scope: refused by the server, with its words.
    let other = gdid_with_env(
        &["next", "--store", &url, "--scope", "billing"],
        &[("GDID_TOKEN", token)],
    );
    assert!(!other.status.success());
    assert!(stderr(&other).contains("403"), "{}", stderr(&other));
    assert!(terminate(server).contains("stopped"));
}

#[test]
fn https_with_a_certificate_made_here_and_trusted_through_ssl_cert_file() {
    let dir = folder("cli_serve_tls");
    let certified = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let (cert, key) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, certified.cert.pem()).unwrap();
    std::fs::write(&key, certified.signing_key.serialize_pem()).unwrap();
    let store = gdid_testkit::sqlite_url("cli_serve_tls");
    let tokens = tokens_file(&dir, &format!("{TOKEN} *\n"));
    let (server, url) = serve_on(
        &store,
        &tokens,
        &[
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
            "--authority",
            "7",
        ],
    );
    assert!(url.starts_with("https://127.0.0.1:"), "{url}");
    let url = url.replace("127.0.0.1", "localhost");
    let trusted = gdid_with_env(
        &["next", "--store", &url, "--count", "2"],
        &[
            ("GDID_TOKEN", TOKEN),
            ("SSL_CERT_FILE", cert.to_str().unwrap()),
        ],
    );
    assert!(trusted.status.success(), "{}", stderr(&trusted));
    let ids: Vec<Gdid> = stdout(&trusted)
        .lines()
        .map(|l| l.parse().unwrap())
        .collect();
    assert_eq!(ids.len(), 2);
    assert!(ids.iter().all(|id| id.authority() == 7));
    // Without the certificate trusted, nothing is issued.
    let untrusted = gdid_with_env(&["next", "--store", &url], &[("GDID_TOKEN", TOKEN)]);
    assert!(!untrusted.status.success());
    assert!(stdout(&untrusted).is_empty());
    terminate(server);
}

#[test]
fn mutual_tls_with_the_client_certificate_from_the_environment() {
    let dir = folder("cli_serve_mtls");
    let ca = gdid_testkit::tls::TestCa::new();
    let write = |name: &str, text: &str| {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        path.display().to_string()
    };
    let (server_chain, server_key) = ca.server("localhost");
    let (client_chain, client_key) = ca.client("orders-service");
    let ca_file = write("ca.pem", &ca.pem());
    let (cert, key) = (
        write("cert.pem", &server_chain),
        write("key.pem", &server_key),
    );
    let (client_cert, client_key) = (
        write("client.pem", &client_chain),
        write("client-key.pem", &client_key),
    );
    let store = gdid_testkit::sqlite_url("cli_serve_mtls");
    let tokens = tokens_file(&dir, &format!("{TOKEN} *\n"));
    let tls = [
        "--tls-client-ca",
        &ca_file,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ];
    let (server, url) = serve_on(&store, &tokens, &tls);
    let url = url.replace("127.0.0.1", "localhost");
    let base = [("GDID_TOKEN", TOKEN), ("SSL_CERT_FILE", ca_file.as_str())];
    let with_certificate = [
        ("GDID_TLS_CLIENT_CERT", client_cert.as_str()),
        ("GDID_TLS_CLIENT_KEY", client_key.as_str()),
    ];
    let next =
        |env: &[(&str, &str)]| gdid_with_env(&["next", "--store", &url, "--count", "2"], env);
    let shown = next(&[&base[..], &with_certificate[..]].concat());
    assert!(shown.status.success(), "{}", stderr(&shown));
    assert_eq!(stdout(&shown).lines().count(), 2);
    // Without the client certificate, or with half of it, nothing is issued.
    let refused = next(&base);
    assert!(!refused.status.success());
    assert!(stdout(&refused).is_empty());
    let half = next(&[&base[..], &with_certificate[..1]].concat());
    assert!(!half.status.success());
    assert!(
        stderr(&half).contains("GDID_TLS_CLIENT_KEY"),
        "{}",
        stderr(&half)
    );
    terminate(server);
}

/// A GET with the token over a plain socket: the status line and the body.
fn get(url: &str, path: &str) -> (String, String) {
    let address = url.trim_start_matches("http://");
    let mut stream = TcpStream::connect(address).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {address}\r\nAuthorization: Bearer {TOKEN}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    (head.lines().next().unwrap().to_owned(), body.to_owned())
}

/// `count` ids of shop/`sequence` asked of the server at `url` (`POST /v1/ids`, with the token).
fn ids(url: &str, sequence: &str, count: u64) -> Vec<String> {
    let client = gdid::http::client::Remote::new(
        url,
        &gdid::http::client::RemoteOptions::default().token(TOKEN),
    )
    .unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let form = gdid::Form::Text;
    runtime
        .block_on(client.ids("shop", sequence, count, form))
        .unwrap()
}

#[test]
fn metrics_readiness_and_a_graceful_stop() {
    let dir = folder("cli_serve_metrics");
    let store = gdid_testkit::sqlite_url("cli_serve_metrics");
    let tokens = tokens_file(&dir, &format!("{TOKEN} *:metrics\n"));
    let (server, url) = serve_on(&store, &tokens, &["--metrics", "--metrics-idle", "2"]);
    let (status, body) = get(&url, "/v1/ready");
    assert!(status.contains("200"), "{status}: {body}");
    assert_eq!(ids(&url, "orders", 5).len(), 5);
    let (status, body) = get(&url, "/v1/metrics");
    assert!(status.contains("200"), "{status}");
    assert!(body.contains("gdid_ids_taken_total{"), "{body}");
    // Series not updated for --metrics-idle (2 s here) leave the scrape.
    let began = std::time::Instant::now();
    while get(&url, "/v1/metrics").1.contains("gdid_ids_taken_total{") {
        assert!(
            began.elapsed() < std::time::Duration::from_secs(10),
            "a series idle for 10 s is still scraped"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(
        began.elapsed() >= std::time::Duration::from_secs(1),
        "{:?}",
        began.elapsed()
    );
    // The server's own generator took a block of 16 and served 5: SIGTERM gives 11 back.
    let said = terminate(server);
    assert!(said.contains("stopped; 11 unused ids"), "{said}");
    let after = gdid(&[
        "next",
        "--store",
        &store,
        "--scope",
        "shop",
        "--sequence",
        "orders",
    ]);
    let next: Gdid = stdout(&after).trim().parse().unwrap();
    assert_eq!(next.counter(), 6, "the ids given back are issued next");
}

#[test]
fn token_scopes_cannot_smuggle_a_line_or_a_field() {
    for scopes in [
        "shop\n0123456789abcdef-evil *",
        "shop *",
        "shop\t*",
        "shop\r",
    ] {
        assert_refused(&["token", "--scopes", scopes], "--scopes holds");
    }
}

#[test]
fn a_tokens_file_read_strictly_and_exposures_warned_of() {
    let dir = folder("cli_serve_strict");
    let store = gdid_testkit::sqlite_url("cli_serve_strict");
    for (text, says) in [
        (
            format!("\u{feff}{TOKEN} shop\n"),
            "line 1: the file starts with a byte-order mark",
        ),
        (
            format!("SHA256:{} shop\n", "ab".repeat(32)),
            "line 1: write the digest's prefix",
        ),
        (
            format!("# ops\n{} *\n", "ab".repeat(32)),
            "line 2: 64 hex digits without `sha256:`",
        ),
    ] {
        let tokens = tokens_file(&dir, &text);
        let refused = gdid(&serve_args(&store, &tokens, &[]));
        assert_eq!(refused.status.code(), Some(2), "{text:?}");
        assert!(
            stderr(&refused).contains(says),
            "{text:?}: {}",
            stderr(&refused)
        );
    }

    // A clear token in a file anyone may write, served in plain HTTP beyond loopback.
    use std::os::unix::fs::PermissionsExt;
    let tokens = tokens_file(&dir, &format!("{TOKEN} shop\n"));
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o666)).unwrap();
    let (server, _) = serve(&serve_args(&store, &tokens, &["--listen", "0.0.0.0:0"]));
    let said = terminate(server);
    for warning in [
        "others may write it (mode 666)",
        "anyone on this machine may read its 1 token(s) in clear",
        "plain HTTP on 0.0.0.0:",
    ] {
        assert!(said.contains(warning), "no {warning:?} in: {said}");
    }
    // By digest, owner-only, on loopback: nothing to warn of.
    std::fs::write(
        &tokens,
        format!("{}\n", gdid_http::server::hashed_line(TOKEN, "shop")),
    )
    .unwrap();
    std::fs::set_permissions(&tokens, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (server, _) = serve_on(&store, &tokens, &[]);
    let said = terminate(server);
    assert!(!said.contains("warning"), "{said}");
}

/// A proxy named by the environment is never used: the token would reach it (and it could
/// answer with blocks of its own).
#[test]
fn the_client_reaches_the_server_directly_whatever_the_proxy_variables_say() {
    let dir = folder("cli_serve_proxy");
    let store = gdid_testkit::sqlite_url("cli_serve_proxy");
    let tokens = tokens_file(&dir, &format!("{TOKEN} shop\n"));
    let (server, url) = serve_on(&store, &tokens, &[]);
    let proxy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    proxy.set_nonblocking(true).unwrap();
    let proxy_url = format!("http://{}", proxy.local_addr().unwrap());
    let next = gdid_with_env(
        &["next", "--store", &url, "--scope", "shop", "--count", "2"],
        &[
            ("GDID_TOKEN", TOKEN),
            ("HTTP_PROXY", &proxy_url),
            ("http_proxy", &proxy_url),
            ("HTTPS_PROXY", &proxy_url),
            ("ALL_PROXY", &proxy_url),
            ("NO_PROXY", ""),
        ],
    );
    assert!(next.status.success(), "{}", stderr(&next));
    assert_eq!(stdout(&next).lines().count(), 2);
    assert!(
        proxy
            .accept()
            .is_err_and(|e| e.kind() == std::io::ErrorKind::WouldBlock),
        "the client connected to the proxy"
    );
    terminate(server);
}

/// A process that holds SQLite's write lock on `file` (`BEGIN EXCLUSIVE`) until killed.
fn lock_sqlite(file: &str) -> KillOnDrop {
    let mut locker = Command::new("python3")
        .args([
            "-c",
            "import sqlite3, sys, time\n\
             c = sqlite3.connect(sys.argv[1], isolation_level=None)\n\
             c.execute('BEGIN EXCLUSIVE')\n\
             print('locked', flush=True)\n\
             time.sleep(120)",
            file,
        ])
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3");
    assert_eq!(first_line(&mut locker), "locked");
    KillOnDrop(locker)
}

/// A server on a SQLite file whose `/v1/ids` generators of ten sequences hold ids, then the
/// file locked by another process: the server, its URL and the lock.
fn server_with_a_stuck_store(name: &str) -> (KillOnDrop, KillOnDrop) {
    let dir = folder(name);
    let store = gdid_testkit::sqlite_url(name);
    let tokens = tokens_file(&dir, &format!("{TOKEN} *\n"));
    let (server, url) = serve_on(&store, &tokens, &[]);
    for sequence in 0..10 {
        assert_eq!(ids(&url, &format!("s{sequence}"), 2).len(), 2);
    }
    let lock = lock_sqlite(store.trim_start_matches("sqlite:"));
    (server, lock)
}

/// A stop whose store does not answer gives back from every generator at once, within the
/// request timeout (10 s) in all, not 3 s a generator one after another.
#[test]
fn a_stop_with_a_stuck_store_ends_within_its_deadline() {
    let (mut server, _lock) = server_with_a_stuck_store("cli_serve_stuck");
    let began = std::time::Instant::now();
    let status = server.terminate();
    let took = began.elapsed();
    assert!(status.success(), "{status}");
    assert!(took < std::time::Duration::from_secs(12), "{took:?}");
}

/// A second signal stops at once.
#[test]
fn a_second_signal_stops_at_once() {
    let (mut server, _lock) = server_with_a_stuck_store("cli_serve_second");
    let pid = server.0.id().to_string();
    let began = std::time::Instant::now();
    for _ in 0..2 {
        let sent = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(sent.success());
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let status = server.0.wait().unwrap();
    assert!(
        began.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        began.elapsed()
    );
    assert_eq!(status.code(), Some(1));
    let mut said = String::new();
    server
        .0
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut said)
        .unwrap();
    assert!(said.contains("a second signal: stopped at once"), "{said}");
}

/// `GET /v1/authority` with `token` on an open HTTP/1.1 connection: the status code.
fn authority_status(stream: &mut TcpStream, token: &str) -> u16 {
    write!(
        stream,
        "GET /v1/authority HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n\r\n"
    )
    .unwrap();
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut status = String::new();
    reader.read_line(&mut status).unwrap();
    let mut length = 0;
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        if line.trim().is_empty() {
            break;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = value.trim().parse().unwrap();
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).unwrap();
    status.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// SIGHUP reads the tokens file again without dropping a connection whose token it still
/// lists; a request refused its token (401) closes its connection after the reply, so a token
/// the file no longer lists keeps no connection.
#[test]
fn sighup_reloads_the_tokens_without_dropping_a_connection() {
    let dir = folder("cli_serve_hangup");
    let store = gdid_testkit::sqlite_url("cli_serve_hangup");
    let (old, new) = ("hangup-old-token-0123456789", "hangup-new-token-0123456789");
    let tokens = tokens_file(&dir, &format!("{old} shop\n"));
    let (mut server, url) = serve_on(&store, &tokens, &[]);
    let connect = || TcpStream::connect(url.trim_start_matches("http://")).unwrap();
    let mut held = connect();
    assert_eq!(authority_status(&mut held, old), 200);
    assert_eq!(authority_status(&mut connect(), new), 401);

    std::fs::write(&tokens, format!("{new} shop\n")).unwrap();
    let hangup = |server: &KillOnDrop| {
        let pid = server.0.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-HUP", &pid])
                .status()
                .unwrap()
                .success()
        );
    };
    // Asks with `token` on a new connection until the answer is `status`, for 5 s at most (a
    // refused request closes its connection): that connection.
    let until = |token: &str, status: u16, why: &str| {
        let began = std::time::Instant::now();
        loop {
            let mut connection = connect();
            if authority_status(&mut connection, token) == status {
                return connection;
            }
            assert!(began.elapsed() < std::time::Duration::from_secs(5), "{why}");
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    hangup(&server);
    let mut connection = until(new, 200, "not reloaded");
    // The connection open across the reload with the old token: refused, and closed.
    assert_eq!(authority_status(&mut held, old), 401);
    held.set_read_timeout(Some(std::time::Duration::from_secs(2)))
        .unwrap();
    let closed = match held.read_to_end(&mut Vec::new()) {
        Ok(_) => true,
        Err(e) => !matches!(
            e.kind(),
            std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
        ),
    };
    assert!(closed, "the revoked token's connection stayed open");

    // A file that cannot be used keeps the tokens it still lists, and refuses the others: the
    // new token's connection is still served.
    std::fs::write(&tokens, format!("{new} shop\nshort shop\n")).unwrap();
    hangup(&server);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(authority_status(&mut connection, new), 200);
    std::fs::write(&tokens, "short shop\n").unwrap();
    hangup(&server);
    until(
        new,
        401,
        "a token the broken file no longer lists is still accepted",
    );
    assert!(
        matches!(server.0.try_wait(), Ok(None)),
        "the server stopped"
    );
    let said = terminate(server);
    assert!(said.contains("SIGHUP: 1 token(s)"), "{said}");
    assert!(
        said.contains("the tokens it no longer lists are refused, the others kept"),
        "{said}"
    );
}

#[test]
fn threads_are_one_or_more() {
    let refused = gdid(&["serve", "--threads", "0", "--tokens", "none"]);
    assert_eq!(refused.status.code(), Some(2), "{}", stderr(&refused));
    assert!(
        stderr(&refused).contains("--threads"),
        "{}",
        stderr(&refused)
    );
}
