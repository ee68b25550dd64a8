//! Clients without a token that try to take the server offline: silent sockets, an HTTP/2
//! preface and nothing more, a client that sends requests and never reads the replies. Each is
//! dropped within the deadline that concerns it, and a well-behaved client from another address
//! is served meanwhile.

mod common;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gdid_engine::MemoryAuthority;
use gdid_http::server::ConnectionLimits;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

/// Limits short enough for a test: 16 places, 4 per address, 400 ms for a request head, 300 ms
/// idle, 1 s to take a reply.
fn limits() -> ConnectionLimits {
    ConnectionLimits {
        max_connections: 16,
        max_per_address: 4,
        header_timeout: Duration::from_millis(400),
        idle_timeout: Duration::from_millis(300),
        write_timeout: Duration::from_secs(1),
        ..ConnectionLimits::default()
    }
}

async fn server() -> common::Running {
    let authority = Arc::new(MemoryAuthority::new(1));
    let built = common::builder(authority)
        .connection_limits(limits())
        .build();
    common::start(built, None).await
}

/// A connection to `server` from `source` (another loopback address: another host, as far as
/// the server can tell), receiving into a buffer of `receive_buffer` bytes when given.
async fn connect_from(
    source: &str,
    server: SocketAddr,
    receive_buffer: Option<u32>,
) -> std::io::Result<TcpStream> {
    let socket = TcpSocket::new_v4()?;
    socket.bind(format!("{source}:0").parse().unwrap())?;
    if let Some(size) = receive_buffer {
        socket.set_recv_buffer_size(size)?;
    }
    socket.connect(server).await
}

/// Whether the server closed `stream` within `within`: a read ends (EOF or reset) instead of
/// waiting.
async fn closed_within(stream: &mut TcpStream, within: Duration) -> bool {
    let mut buffer = [0; 4096];
    let deadline = Instant::now() + within;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buffer)).await {
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => {}
            Err(_) => return false,
        }
    }
}

async fn health(server: &common::Running) -> reqwest::StatusCode {
    // reqwest is built without a crypto provider: one for the process, ring.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .timeout(Duration::from_secs(2))
        .no_proxy()
        .build()
        .unwrap();
    let url = format!("{}/v1/health", server.url);
    client.get(url).send().await.expect("health").status()
}

#[tokio::test]
async fn silent_sockets_do_not_take_the_server_offline_and_are_dropped() {
    let server = server().await;
    // More than every place, from one other address.
    let mut silent = Vec::new();
    for _ in 0..40 {
        if let Ok(stream) = connect_from("127.0.0.2", server.addr, None).await {
            silent.push(stream);
        }
    }
    assert!(silent.len() >= 20, "{} connected", silent.len());
    let began = Instant::now();
    assert_eq!(health(&server).await, 200);
    assert!(
        began.elapsed() < Duration::from_secs(1),
        "{:?}",
        began.elapsed()
    );
    // Each silent socket is dropped: over the per-address cap at once, the others after the
    // 400 ms given for a request head.
    for stream in &mut silent {
        assert!(closed_within(stream, Duration::from_secs(2)).await);
    }
    server.stop().await;
}

#[tokio::test]
async fn an_http2_preface_alone_is_dropped_after_the_header_deadline() {
    let server = server().await;
    let mut stream = connect_from("127.0.0.3", server.addr, None).await.unwrap();
    stream.write_all(b"PRI * HTTP/2.0\r\n").await.unwrap();
    let began = Instant::now();
    assert!(closed_within(&mut stream, Duration::from_secs(2)).await);
    assert!(
        began.elapsed() >= Duration::from_millis(300),
        "{:?}",
        began.elapsed()
    );
    server.stop().await;
}

#[tokio::test]
async fn clients_that_never_read_their_replies_are_dropped() {
    let server = server().await;
    // As many as one address may hold, each pipelining requests without end and reading no
    // reply (a receive buffer of 4 KiB: its replies soon stop going out).
    let mut stuck = Vec::new();
    for _ in 0..limits().max_per_address {
        let stream = connect_from("127.0.0.4", server.addr, Some(4096))
            .await
            .unwrap();
        let stream = stream.into_std().unwrap();
        stream.set_nonblocking(false).unwrap();
        let mut writer = stream.try_clone().unwrap();
        std::thread::spawn(move || {
            let requests = b"GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n".repeat(1000);
            for _ in 0..100 {
                if writer.write_all(&requests).is_err() {
                    return;
                }
            }
        });
        stuck.push(stream);
    }
    // Once their replies stop going out (the server's send buffers full: a few seconds of
    // debug build), each is idle (300 ms), then gets 400 ms of grace, and is dropped: the address
    // has its places back, though none of them ever read a byte.
    let _ = rustls::crypto::ring::default_provider().install_default();
    let same_address = reqwest::Client::builder()
        .local_address("127.0.0.4".parse::<std::net::IpAddr>().unwrap())
        .timeout(Duration::from_secs(2))
        .no_proxy()
        .build()
        .unwrap();
    let began = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let answered = same_address
            .get(format!("{}/v1/health", server.url))
            .send()
            .await;
        if answered.is_ok_and(|reply| reply.status() == 200) {
            break;
        }
        assert!(
            began.elapsed() < Duration::from_secs(30),
            "the stuck connections still hold the address's places"
        );
    }
    eprintln!(
        "the address had its places back after {:?}",
        began.elapsed()
    );
    drop(stuck);
    server.stop().await;
}

/// A `POST /v1/ids` request on `client` for `count` ids in text (the longest form).
fn ask_for_ids(
    client: &mut h2::client::SendRequest<bytes::Bytes>,
    server: SocketAddr,
    count: u64,
) -> h2::client::ResponseFuture {
    let request = http::Request::post(format!("http://{server}/v1/ids"))
        .header("authorization", format!("Bearer {}", common::ALL))
        .header("content-type", "application/json")
        .body(())
        .unwrap();
    let (reply, mut body) = client.send_request(request, false).unwrap();
    let ask = format!(r#"{{"scope":"shop","sequence":"orders","count":{count},"form":"text"}}"#);
    body.send_data(ask.into(), true).unwrap();
    reply
}

#[tokio::test]
async fn unread_replies_hold_a_bounded_memory_given_back_with_their_connection() {
    // The server's reply memory and each connection's, both as small as they may be: one
    // reply of the largest size.
    let server = common::start(
        common::builder(Arc::new(MemoryAuthority::new(1)))
            .connection_limits(ConnectionLimits {
                reply_memory: 1,
                reply_memory_per_connection: 1,
                ..limits()
            })
            .build(),
        None,
    )
    .await;
    // An HTTP/2 client that reads no reply body (windows of 0), its first reply the largest.
    let stream = connect_from("127.0.0.5", server.addr, None).await.unwrap();
    let (mut client, connection) = h2::client::Builder::new()
        .initial_window_size(0)
        .handshake::<_, bytes::Bytes>(stream)
        .await
        .unwrap();
    let driver = tokio::spawn(connection);
    let largest = ask_for_ids(&mut client, server.addr, 1000).await.unwrap();
    assert_eq!(largest.status(), 200);
    // Its reply is held unsent: on the same connection, and on another, no more ids.
    let refused = ask_for_ids(&mut client, server.addr, 1).await.unwrap();
    assert_eq!(refused.status(), 503);
    assert_eq!(refused.headers()["retry-after"], "1");
    let (status, code) = ids_from("127.0.0.6", &server).await;
    assert_eq!((status, code.as_str()), (503, "busy"));
    // The client leaves: its reply's memory comes back with the connection.
    driver.abort();
    drop((client, largest, refused));
    let began = Instant::now();
    while ids_from("127.0.0.6", &server).await.0 != 200 {
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "the memory of a dropped connection's reply never came back"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.stop().await;
}

/// `POST /v1/ids` for one id from `source`, read whole: the status and the error's code.
async fn ids_from(source: &str, server: &common::Running) -> (u16, String) {
    let _ = rustls::crypto::ring::default_provider().install_default();
    let client = reqwest::Client::builder()
        .local_address(source.parse::<std::net::IpAddr>().unwrap())
        .no_proxy()
        .build()
        .unwrap();
    let reply = client
        .post(format!("{}/v1/ids", server.url))
        .bearer_auth(common::ALL)
        .body(r#"{"scope":"shop","sequence":"orders","count":1}"#)
        .send()
        .await
        .unwrap();
    let status = reply.status().as_u16();
    let body: serde_json::Value = reply.json().await.unwrap();
    (
        status,
        body["error"]["code"].as_str().unwrap_or("").to_owned(),
    )
}
