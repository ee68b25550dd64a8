//! `gdid serve`'s memory while clients with a token hold every place it has and never read:
//! over HTTP/2 with a zero receive window, each connection with every stream it may open asking
//! `POST /v1/ids` for the largest reply (the most ids, in hex); over HTTP/1 with the same
//! requests pipelined. The server's resident memory stays under 256 MiB; the test stops the
//! server and fails as soon as it goes above.

mod common;

use std::io::Write;
use std::net::SocketAddr;
use std::process::Stdio;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpSocket, TcpStream};

const TOKEN: &str = "cli-serve-memory-token-0123456789";
/// The request whose reply is the largest the server sends by default.
const LARGEST: &str = r#"{"scope":"shop","sequence":"orders","count":10000,"form":"hex"}"#;
const LIMIT_MIB: u64 = 256;
/// Places of `gdid serve` by default, and from one address.
const PLACES: usize = 1024;
const PER_ADDRESS: usize = 64;
/// Streams one HTTP/2 connection may open (the server's default).
const STREAMS: usize = 64;

/// The resident memory of process `pid`, in KiB.
fn resident_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/PID/status")
}

/// A connection from loopback address `source`, receiving into a small buffer.
async fn connect_from(source: &str, server: SocketAddr) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(format!("{source}:0").parse().unwrap())?;
    socket.set_recv_buffer_size(4096)?;
    socket.connect(server).await
}

/// An HTTP/2 client that opens every stream it may, each asking for the largest reply, and
/// reads nothing: its streams' windows are 0. Held until the task is aborted.
async fn hold_http2(source: String, server: SocketAddr) {
    let Ok(stream) = connect_from(&source, server).await else {
        return;
    };
    let Ok((client, connection)) = h2::client::Builder::new()
        .initial_window_size(0)
        .handshake::<_, Bytes>(stream)
        .await
    else {
        return;
    };
    let driver = tokio::spawn(connection);
    let mut replies = Vec::with_capacity(STREAMS);
    for _ in 0..STREAMS {
        let Ok(mut ready) = client.clone().ready().await else {
            break;
        };
        let request = http::Request::post(format!("http://{server}/v1/ids"))
            .header("authorization", format!("Bearer {TOKEN}"))
            .header("content-type", "application/json")
            .body(())
            .unwrap();
        let Ok((reply, mut body)) = ready.send_request(request, false) else {
            break;
        };
        if body
            .send_data(Bytes::from_static(LARGEST.as_bytes()), true)
            .is_err()
        {
            break;
        }
        replies.push(reply);
    }
    // Never polled: nothing is read.
    let _held = (replies, client);
    let _ = driver.await;
}

/// An HTTP/1.1 client that pipelines the largest request until the server stops reading, and
/// reads nothing. Held until the task is aborted.
async fn hold_http1(source: String, server: SocketAddr) {
    let Ok(mut stream) = connect_from(&source, server).await else {
        return;
    };
    let request = format!(
        "POST /v1/ids HTTP/1.1\r\nhost: {server}\r\nauthorization: Bearer {TOKEN}\r\n\
         content-type: application/json\r\ncontent-length: {}\r\n\r\n{LARGEST}",
        LARGEST.len()
    );
    loop {
        if stream.write_all(request.as_bytes()).await.is_err() {
            return;
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum Protocol {
    Http1,
    Http2,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_place_held_by_http2_slow_readers_of_the_largest_replies_stays_under_256_mib() {
    every_place_held_by(Protocol::Http2).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_place_held_by_http1_slow_readers_of_the_largest_replies_stays_under_256_mib() {
    every_place_held_by(Protocol::Http1).await;
}

async fn every_place_held_by(protocol: Protocol) {
    let dir = std::env::temp_dir().join(gdid_testkit::fresh("cli_serve_memory"));
    std::fs::create_dir_all(&dir).unwrap();
    let tokens = dir.join("tokens");
    std::fs::write(&tokens, format!("{TOKEN} shop\n")).unwrap();
    let store = gdid_testkit::sqlite_url("cli_serve_memory");
    let tokens = tokens.to_str().expect("a UTF-8 path");
    let (server, url) = common::serve(
        &[
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--tokens",
            tokens,
            "--store",
            &store,
        ],
        Stdio::null(),
    );
    let pid = server.0.id();
    let address: SocketAddr = url.trim_start_matches("http://").parse().unwrap();

    // Every place, from as many addresses as the per-address cap asks.
    let mut holders = Vec::with_capacity(PLACES);
    for place in 0..PLACES {
        let source = format!("127.0.0.{}", 2 + place / PER_ADDRESS);
        holders.push(match protocol {
            Protocol::Http2 => tokio::spawn(hold_http2(source, address)),
            Protocol::Http1 => tokio::spawn(hold_http1(source, address)),
        });
    }
    let started = Instant::now();
    let mut highest = 0;
    while started.elapsed() < Duration::from_secs(12) {
        let now = resident_kib(pid);
        highest = highest.max(now);
        if now > LIMIT_MIB * 1024 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    drop(server);
    for holder in holders {
        holder.abort();
    }
    let _ = writeln!(
        std::io::stderr(),
        "highest resident memory of gdid serve, {protocol:?}: {} MiB",
        highest / 1024
    );
    assert!(
        highest <= LIMIT_MIB * 1024,
        "gdid serve reached {} MiB with every place held by {protocol:?} slow readers (limit \
         {LIMIT_MIB} MiB)",
        highest / 1024
    );
}
