//! The conformance suite on `RemoteAuthority`: each authority a `gdid serve` server of its own
//! (in this process, over an in-memory authority), reached over HTTP by a client of its own at
//! every connection, its token allowed to give ids back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gdid_engine::MemoryAuthority;
use gdid_http::client::{RemoteAuthority, RemoteOptions};
use gdid_http::server::{Server, Tokens};
use gdid_testkit::conformance::StoreUnderTest;
use tokio::net::TcpListener;

const TOKEN: &str = "conformance-token-0123456789";

/// One server per authority number, started on first use and kept for the test.
#[derive(Debug, Default)]
struct Served {
    urls: Mutex<HashMap<u8, String>>,
}

impl StoreUnderTest for Served {
    type Authority = Arc<RemoteAuthority>;
    type Place = String;

    fn store(&self) -> &str {
        "http"
    }

    async fn place(&self, number: u8) -> String {
        if let Some(url) = self.urls.lock().unwrap().get(&number) {
            return url.clone();
        }
        let tokens = Tokens::parse(&format!("{TOKEN} *:give-back")).unwrap();
        let server = Server::builder(Arc::new(MemoryAuthority::new(number)), tokens).build();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        // Served until the test's runtime ends.
        tokio::spawn(async move { server.serve(listener, None, std::future::pending()).await });
        self.urls
            .lock()
            .unwrap()
            .entry(number)
            .or_insert(url)
            .clone()
    }

    async fn connect(&self, url: &String, number: u8) -> Arc<RemoteAuthority> {
        let authority = RemoteAuthority::connect(url, &RemoteOptions::default().token(TOKEN))
            .await
            .unwrap();
        assert_eq!(gdid_engine::Authority::number(&authority), number);
        Arc::new(authority)
    }
}

impl Served {
    /// The backend, tallied as the store `http` (see `gdid_testkit::ran`).
    fn open() -> Option<Served> {
        let _ = rustls::crypto::ring::default_provider().install_default();
        gdid_testkit::ran("http");
        Some(Served::default())
    }
}

gdid_testkit::conformance!(served { authority => Served::open() });
