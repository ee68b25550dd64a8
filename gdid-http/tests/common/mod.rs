//! A server on a port of its own, in this process, over an in-memory authority (the HTTP layer's
//! tests; the database authorities are served by `gdid serve` in gdid-cli's tests).

#![allow(dead_code)] // each test binary uses a part

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use gdid_engine::{DynAuthority, MemoryAuthority};
use gdid_http::server::{ConnectionLimits, Server, ServerBuilder, Tokens};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// May use scope `shop` only, and give ids back in it.
pub(crate) const SHOP: &str = "shop-token-0123456789";
/// May use every scope, give ids back and read the metrics of each.
pub(crate) const ALL: &str = "ops-token-0123456789";
/// May use scope `shop` and read its metrics.
pub(crate) const SHOP_METRICS: &str = "shop-metrics-token-0123456789";
/// May use scope `shop`, and give nothing back.
pub(crate) const NO_GIVE_BACK: &str = "keeper-token-0123456789";

pub(crate) fn tokens() -> Tokens {
    Tokens::parse(&format!(
        "{}\n{ALL} *:give-back:metrics\n{NO_GIVE_BACK} shop\n{SHOP_METRICS} shop:metrics\n",
        gdid_http::server::hashed_line(SHOP, "shop:give-back")
    ))
    .unwrap()
}

/// A plain reqwest client, for requests the API client would never send. reqwest is built
/// without a crypto provider (one provider in the process: ring), so one is installed first.
pub(crate) fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
}

/// `GET url path`, with `token` as a bearer token if any.
pub(crate) async fn get(url: &str, path: &str, token: Option<&str>) -> reqwest::Response {
    let mut request = client().get(format!("{url}{path}"));
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    request.send().await.unwrap()
}

/// `POST url path` of `body` as JSON, with `token` as a bearer token.
pub(crate) async fn post_json(
    url: &str,
    path: &str,
    token: &str,
    body: &serde_json::Value,
) -> reqwest::Response {
    client()
        .post(format!("{url}{path}"))
        .bearer_auth(token)
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await
        .unwrap()
}

/// A running server and how to stop it.
pub(crate) struct Running {
    pub addr: SocketAddr,
    pub url: String,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<std::io::Result<u64>>>,
}

impl Running {
    /// Stops it as SIGTERM would: how many ids its generators gave back.
    pub(crate) async fn stop(mut self) -> u64 {
        let _ = self.stop.take().unwrap().send(());
        self.task.take().unwrap().await.unwrap().unwrap()
    }
}

/// The server of `authority` the tests use: short limits for the slow-client tests.
pub(crate) fn builder(authority: Arc<dyn DynAuthority>) -> ServerBuilder {
    Server::builder(authority, tokens())
        .request_timeout(Duration::from_millis(800))
        .max_count(1000)
        .max_block(1_000_000)
        .connection_limits(ConnectionLimits {
            header_timeout: Duration::from_millis(400),
            ..ConnectionLimits::default()
        })
}

pub(crate) async fn start(server: Server, tls: Option<Arc<rustls::ServerConfig>>) -> Running {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (stop, stopped) = oneshot::channel();
    let scheme = if tls.is_some() { "https" } else { "http" };
    let task = tokio::spawn(async move {
        server
            .serve(listener, tls, async {
                let _ = stopped.await;
            })
            .await
    });
    Running {
        addr,
        url: format!("{scheme}://{addr}"),
        stop: Some(stop),
        task: Some(task),
    }
}

/// A server of a fresh in-memory authority 1.
pub(crate) async fn memory_server() -> (Running, Arc<MemoryAuthority>) {
    memory_server_with(|server| server).await
}

/// A server of a fresh in-memory authority 1, set up by `configure` beyond [`builder`]'s.
pub(crate) async fn memory_server_with(
    configure: impl FnOnce(ServerBuilder) -> ServerBuilder,
) -> (Running, Arc<MemoryAuthority>) {
    let authority = Arc::new(MemoryAuthority::new(1));
    let running = start(configure(builder(authority.clone())).build(), None).await;
    (running, authority)
}

/// What the server at `addr` answers, within 5 s, to a POST of `path` with `token` whose body
/// stops after its first bytes (200 announced).
pub(crate) async fn answer_to_a_cut_off_body(addr: SocketAddr, path: &str, token: &str) -> String {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {token}\r\n\
         Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{{\"scope\":"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let mut answer = vec![0; 4096];
    let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut answer))
        .await
        .expect("no answer within 5 s")
        .unwrap();
    String::from_utf8_lossy(&answer[..n]).into_owned()
}
