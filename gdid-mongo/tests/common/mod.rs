//! What the MongoDB tests share: the server of `GDID_MONGODB_URI` (the project's test server, or
//! a genuine MongoDB), and names no earlier run has used.
#![allow(dead_code)] // each test file uses its own part

use mongodb::{Client, Database};

/// The server's URI; `None` (the test says it is skipped) when `GDID_MONGODB_URI` is not set,
/// a panic with `CI=true`.
pub(crate) fn uri() -> Option<String> {
    gdid_testkit::server("GDID_MONGODB_URI")
}

/// A new client of the server.
pub(crate) async fn client(uri: &str) -> Client {
    Client::with_uri_str(uri).await.unwrap()
}

/// The `gdid_test` database, or `None` as [`uri`] says.
pub(crate) async fn database() -> Option<Database> {
    let uri = uri()?;
    Some(client(&uri).await.database("gdid_test"))
}

/// A name no earlier run has used.
pub(crate) use gdid_testkit::fresh;

/// A TCP relay to the server that can be stopped: a shard that goes down while clients hold
/// connections to it.
pub(crate) struct Relay {
    pub uri: String,
    task: tokio::task::JoinHandle<()>,
}

impl Relay {
    /// Relays a local port to the host and port of `uri`.
    pub(crate) async fn start(uri: &str) -> Relay {
        let target = uri
            .trim_start_matches("mongodb://")
            .split(['/', '?'])
            .next()
            .unwrap()
            .to_owned();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let task = tokio::spawn(async move {
            // Dropping the set (when this task is aborted) aborts every relayed connection.
            let mut connections = tokio::task::JoinSet::new();
            loop {
                let (mut inbound, _) = listener.accept().await.unwrap();
                let target = target.clone();
                connections.spawn(async move {
                    let mut outbound = tokio::net::TcpStream::connect(target).await.unwrap();
                    let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                });
            }
        });
        Relay {
            uri: format!(
                "mongodb://127.0.0.1:{port}/?directConnection=true&serverSelectionTimeoutMS=500"
            ),
            task,
        }
    }

    /// Closes the port and every relayed connection.
    pub(crate) async fn stop(self) {
        self.task.abort();
        let _ = self.task.await;
    }
}
