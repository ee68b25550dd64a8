//! [`FaultProxy`]: a TCP relay on loopback between a client and a server that can add latency,
//! cut every connection, or refuse new ones: a slow, flaky or stopped store, made on demand.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the relay does to the traffic now.
#[derive(Debug, Default)]
struct Faults {
    /// Added before each chunk is passed on, in each direction, in microseconds.
    latency_micros: AtomicU64,
    /// New connections are closed at once.
    down: AtomicBool,
}

/// A relay from a port on 127.0.0.1 to `target`.
#[derive(Debug)]
pub struct FaultProxy {
    address: SocketAddr,
    faults: Arc<Faults>,
    /// Bumped to cut every open connection.
    cuts: watch::Sender<u64>,
    task: JoinHandle<()>,
}

impl FaultProxy {
    /// Starts relaying a new port on 127.0.0.1 to `target` (e.g. `127.0.0.1:3306`).
    ///
    /// # Errors
    ///
    /// When no port can be bound.
    pub async fn start(target: SocketAddr) -> std::io::Result<FaultProxy> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        let faults = Arc::new(Faults::default());
        let (cuts, _) = watch::channel(0);
        let task = tokio::spawn(accept(listener, target, Arc::clone(&faults), cuts.clone()));
        Ok(FaultProxy {
            address,
            faults,
            cuts,
            task,
        })
    }

    /// The relay's own address, to give the client instead of the server's.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Delays every chunk by `latency` in each direction (zero: none).
    pub fn set_latency(&self, latency: Duration) {
        let micros = u64::try_from(latency.as_micros()).unwrap_or(u64::MAX);
        self.faults.latency_micros.store(micros, Ordering::Relaxed);
    }

    /// Closes every open connection (the client sees a reset or an end of stream mid-query).
    pub fn cut(&self) {
        self.cuts.send_modify(|n| *n += 1);
    }

    /// Down: every open connection cut and new ones closed at once, as a stopped server; up:
    /// relaying again.
    pub fn set_down(&self, down: bool) {
        self.faults.down.store(down, Ordering::Relaxed);
        if down {
            self.cut();
        }
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
        self.cut();
    }
}

async fn accept(
    listener: TcpListener,
    target: SocketAddr,
    faults: Arc<Faults>,
    cuts: watch::Sender<u64>,
) {
    while let Ok((client, _)) = listener.accept().await {
        if faults.down.load(Ordering::Relaxed) {
            drop(client);
            continue;
        }
        let (faults, mut cut) = (Arc::clone(&faults), cuts.subscribe());
        tokio::spawn(async move {
            let Ok(server) = TcpStream::connect(target).await else {
                return;
            };
            let (client_read, client_write) = client.into_split();
            let (server_read, server_write) = server.into_split();
            tokio::select! {
                () = pass(client_read, server_write, &faults) => {}
                () = pass(server_read, client_write, &faults) => {}
                _ = cut.changed() => {}
            }
        });
    }
}

/// Copies one direction, waiting the current latency before each chunk.
async fn pass(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    faults: &Faults,
) {
    let mut buffer = vec![0; 64 * 1024];
    loop {
        let n = match from.read(&mut buffer).await {
            Ok(0) | Err(_) => return,
            Ok(n) => n,
        };
        let latency = faults.latency_micros.load(Ordering::Relaxed);
        if latency > 0 {
            tokio::time::sleep(Duration::from_micros(latency)).await;
        }
        if to.write_all(&buffer[..n]).await.is_err() {
            return;
        }
    }
}
