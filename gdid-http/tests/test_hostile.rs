//! Clients without a token that try to take the server offline: silent sockets, an HTTP/2
//! preface and nothing more, a client that sends requests and never reads the replies, many
//! hosts keeping connections open with requests that need no token, a host guessing tokens. Each
//! is dropped or slowed within the deadline that concerns it, and a well-behaved client from
//! another address is served meanwhile.

mod common;

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
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
    common::start(built_with(limits()), None).await
}

/// A server of its own with `limits`, not yet serving.
fn built_with(limits: ConnectionLimits) -> gdid_http::server::Server {
    common::builder(Arc::new(MemoryAuthority::new(1)))
        .connection_limits(limits)
        .build()
}

/// [`limits`] with long idle and header timeouts (hyper's header timeout also bounds the wait
/// for a keep-alive connection's next request): a connection the server closes within a second
/// was closed for another reason.
fn patient() -> ConnectionLimits {
    ConnectionLimits {
        idle_timeout: Duration::from_secs(30),
        header_timeout: Duration::from_secs(20),
        ..limits()
    }
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

/// Keeps connections from `source` to `server` for as long as the server lets it, each sending
/// `GET /v1/health` (no token) every 100 ms and reading the reply; a connection closed is opened
/// again 50 ms later. Until `stop`.
async fn keep_alive_without_a_token(source: String, server: SocketAddr, stop: Arc<AtomicBool>) {
    let request = b"GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n";
    while !stop.load(Ordering::Relaxed) {
        if let Ok(mut stream) = connect_from(&source, server, None).await {
            let mut buffer = [0; 1024];
            while !stop.load(Ordering::Relaxed) {
                if stream.write_all(request).await.is_err() {
                    break;
                }
                let read = tokio::time::timeout(Duration::from_secs(1), stream.read(&mut buffer));
                if !matches!(read.await, Ok(Ok(1..))) {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A reqwest client from `source` that opens a connection of its own for each request.
fn client_from(source: &str) -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .local_address(source.parse::<std::net::IpAddr>().unwrap())
        .pool_max_idle_per_host(0)
        .timeout(Duration::from_secs(3))
        .no_proxy()
        .build()
        .unwrap()
}

/// Sends a token holder's `request` and asserts that it was answered 200 within a second.
async fn served_at_once(request: reqwest::RequestBuilder) {
    let began = Instant::now();
    let status = request.send().await.map(|reply| reply.status().as_u16());
    assert!(
        matches!(status, Ok(200)) && began.elapsed() < Duration::from_secs(1),
        "the token holder waited {:?} for {status:?}",
        began.elapsed()
    );
}

#[tokio::test]
async fn hosts_keeping_connections_with_requests_without_a_token_leave_room_for_a_token() {
    let server = server().await;
    // 8 hosts, each with as many connections as it may hold: twice the server's places, every
    // one sending a request without a token more often than the idle timeout.
    let stop = Arc::new(AtomicBool::new(false));
    let mut hosts = Vec::new();
    for host in 10..18 {
        for _ in 0..limits().max_per_address {
            let source = format!("127.0.0.{host}");
            hosts.push(tokio::spawn(keep_alive_without_a_token(
                source,
                server.addr,
                stop.clone(),
            )));
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // A token holder, on a new connection each time, is served at once.
    let holder = client_from("127.0.0.1");
    for _ in 0..5 {
        served_at_once(
            holder
                .post(format!("{}/v1/blocks", server.url))
                .bearer_auth(common::ALL)
                .body(r#"{"scope":"shop","sequence":"orders","size":10}"#),
        )
        .await;
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for host in hosts {
        tokio::time::timeout(Duration::from_secs(5), host)
            .await
            .expect("a host did not stop")
            .unwrap();
    }
    server.stop().await;
}

/// `GET /v1/authority` from `client` with `token`: the status and the reply's `Retry-After`.
async fn authority_with(
    client: &reqwest::Client,
    server: &common::Running,
    token: &str,
) -> (u16, Option<String>) {
    let reply = client
        .get(format!("{}/v1/authority", server.url))
        .bearer_auth(token)
        .send()
        .await
        .unwrap();
    let retry_after = reply
        .headers()
        .get("retry-after")
        .map(|value| value.to_str().unwrap().to_owned());
    (reply.status().as_u16(), retry_after)
}

/// One HTTP/1.1 `GET /v1/authority` with `token` on `stream`, kept open: the status line.
async fn authority_on(stream: &mut TcpStream, token: &str) -> String {
    let request =
        format!("GET /v1/authority HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {token}\r\n\r\n");
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut buffer = [0; 4096];
    let read = tokio::time::timeout(Duration::from_secs(2), stream.read(&mut buffer));
    let n = read.await.expect("no reply within 2 s").unwrap();
    let reply = String::from_utf8_lossy(&buffer[..n]).into_owned();
    reply.lines().next().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn a_host_guessing_tokens_is_slowed_and_valid_tokens_are_not() {
    let server = server().await;
    // A client of the guessing host that showed a valid token before the guesses began.
    let mut known = connect_from("127.0.0.20", server.addr, None).await.unwrap();
    assert_eq!(
        authority_on(&mut known, common::ALL).await,
        "HTTP/1.1 200 OK"
    );
    // The guesses: a few are told 401, then every one is refused before its token is read.
    let guesser = client_from("127.0.0.20");
    let mut answers = Vec::new();
    for guess in 0..40 {
        let token = format!("a-guess-at-a-token-{guess:04}");
        answers.push(authority_with(&guesser, &server, &token).await);
    }
    let told = answers
        .iter()
        .take_while(|(status, _)| *status == 401)
        .count();
    assert!((5..=30).contains(&told), "{answers:?}");
    for (status, retry_after) in &answers[told..] {
        assert_eq!(*status, 429, "{answers:?}");
        assert_eq!(retry_after.as_deref(), Some("1"), "{answers:?}");
    }
    // A valid token is still served on the guessing host's connection that showed one before.
    assert_eq!(
        authority_on(&mut known, common::ALL).await,
        "HTTP/1.1 200 OK"
    );
    // And a valid token is served at once from another host, as often as it likes.
    let other = client_from("127.0.0.21");
    let began = Instant::now();
    for _ in 0..40 {
        assert_eq!(authority_with(&other, &server, common::SHOP).await.0, 200);
    }
    assert!(
        began.elapsed() < Duration::from_secs(2),
        "{:?}",
        began.elapsed()
    );
    // The guesser, a second later, may try once more.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let (status, _) = authority_with(&guesser, &server, "a-guess-at-a-token-late").await;
    assert_eq!(status, 401);
    server.stop().await;
}

#[tokio::test]
async fn silent_hosts_holding_every_place_make_room_for_a_token_holder() {
    // A header deadline longer than the test: the silent sockets are not dropped by it.
    let server = common::start(
        common::builder(Arc::new(MemoryAuthority::new(1)))
            .connection_limits(ConnectionLimits {
                header_timeout: Duration::from_secs(20),
                ..limits()
            })
            .build(),
        None,
    )
    .await;
    // 8 hosts, each with as many silent sockets as it may hold: every place, and as many again
    // waiting in the backlog.
    let mut silent = Vec::new();
    for host in 30..38 {
        for _ in 0..limits().max_per_address {
            let source = format!("127.0.0.{host}");
            silent.push(connect_from(&source, server.addr, None).await.unwrap());
        }
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A token holder, on a new connection each time, is served at once: the oldest connection
    // that showed no token gives its place up.
    let holder = client_from("127.0.0.1");
    for _ in 0..3 {
        served_at_once(
            holder
                .get(format!("{}/v1/authority", server.url))
                .bearer_auth(common::SHOP),
        )
        .await;
    }
    // The silent sockets that gave their places up were closed.
    let mut closed = 0;
    for stream in &mut silent {
        closed += usize::from(closed_within(stream, Duration::from_millis(10)).await);
    }
    assert!(closed >= 16, "{closed} closed");
    drop(silent);
    server.stop().await;
}

/// A token dropped from the tokens file (read again, as on SIGHUP) keeps no connection: its
/// holder's next request on its keep-alive connection is answered 401, and the connection is
/// closed after the reply. Before, it stayed open, and a revoked holder kept its places.
#[tokio::test]
async fn a_token_revoked_by_a_reload_loses_its_connection_at_its_next_request() {
    let built = built_with(patient());
    let running = common::start(built.clone(), None).await;
    let mut stream = connect_from("127.0.0.50", running.addr, None)
        .await
        .unwrap();
    assert_eq!(
        authority_on(&mut stream, common::SHOP).await,
        "HTTP/1.1 200 OK"
    );
    let without_shop = format!("{} *\n", common::ALL);
    assert_eq!(built.reload_tokens_text(&without_shop).unwrap(), 1);
    assert_eq!(
        authority_on(&mut stream, common::SHOP).await,
        "HTTP/1.1 401 Unauthorized"
    );
    assert!(
        closed_within(&mut stream, Duration::from_secs(1)).await,
        "the revoked token's connection stayed open"
    );
    running.stop().await;
}

/// One token holds at most `max_per_token` connections, from however many hosts: the next
/// request that shows it on another connection is answered 429 `too_many_connections` and its
/// connection closed, while another token is served; a place the token gives up is its again.
/// Before, a token's holder from 16 hosts could take all 1,024 places.
#[tokio::test]
async fn a_token_holds_at_most_its_share_of_the_places() {
    let built = built_with(ConnectionLimits {
        max_per_token: 2,
        ..patient()
    });
    let server = common::start(built, None).await;
    let mut held = Vec::new();
    for host in ["127.0.0.51", "127.0.0.52"] {
        let mut stream = connect_from(host, server.addr, None).await.unwrap();
        assert_eq!(
            authority_on(&mut stream, common::SHOP).await,
            "HTTP/1.1 200 OK"
        );
        held.push(stream);
    }
    let mut third = connect_from("127.0.0.53", server.addr, None).await.unwrap();
    assert_eq!(
        authority_on(&mut third, common::SHOP).await,
        "HTTP/1.1 429 Too Many Requests"
    );
    assert!(
        closed_within(&mut third, Duration::from_secs(1)).await,
        "the connection past the token's share stayed open"
    );
    // The two held are still served; another token is served beside them.
    assert_eq!(
        authority_on(&mut held[0], common::SHOP).await,
        "HTTP/1.1 200 OK"
    );
    let mut other = connect_from("127.0.0.53", server.addr, None).await.unwrap();
    assert_eq!(
        authority_on(&mut other, common::ALL).await,
        "HTTP/1.1 200 OK"
    );
    // A connection that shows another token gives the first token's place back.
    assert_eq!(
        authority_on(&mut held[1], common::ALL).await,
        "HTTP/1.1 200 OK"
    );
    let mut again = connect_from("127.0.0.54", server.addr, None).await.unwrap();
    assert_eq!(
        authority_on(&mut again, common::SHOP).await,
        "HTTP/1.1 200 OK"
    );
    // So does a connection that closes.
    drop(held);
    let mut last = connect_from("127.0.0.55", server.addr, None).await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let status = authority_on(&mut last, common::SHOP).await;
        if status == "HTTP/1.1 200 OK" {
            break;
        }
        // The server sees the close a moment later: a 429 closes this connection too.
        assert!(
            Instant::now() < deadline,
            "the closed connection's place was not given back"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
        last = connect_from("127.0.0.55", server.addr, None).await.unwrap();
    }
    server.stop().await;
}

#[tokio::test]
async fn a_connection_refused_its_token_is_closed_after_the_reply() {
    let server = common::start(built_with(patient()), None).await;
    // A token revoked, or mistyped, on a token holder's connection: the 401 closes it, so a
    // revoked holder keeps no place (before, the connection stayed open).
    let mut stream = connect_from("127.0.0.40", server.addr, None).await.unwrap();
    assert_eq!(
        authority_on(&mut stream, common::SHOP).await,
        "HTTP/1.1 200 OK"
    );
    let refused = authority_on(&mut stream, "not-a-token-of-this-server").await;
    assert_eq!(refused, "HTTP/1.1 401 Unauthorized");
    assert!(
        closed_within(&mut stream, Duration::from_secs(1)).await,
        "the connection stayed open after its 401"
    );
    // Without a token ever accepted, the reply says the connection closes, and it does.
    let mut stream = connect_from("127.0.0.40", server.addr, None).await.unwrap();
    stream
        .write_all(b"GET /v1/health HTTP/1.1\r\nhost: x\r\n\r\n")
        .await
        .unwrap();
    let mut reply = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(2), stream.read_to_end(&mut reply));
    read.await.expect("not closed within 2 s").unwrap();
    let reply = String::from_utf8_lossy(&reply).to_ascii_lowercase();
    assert!(reply.starts_with("http/1.1 200"), "{reply}");
    assert!(reply.contains("connection: close"), "{reply}");
    server.stop().await;
}
