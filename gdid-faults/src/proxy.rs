//! [`FaultProxy`]: a TCP relay on loopback between a client and a server that can add latency
//! and the stalls of packet loss, cut every connection, refuse new ones, or switch to another
//! server: a slow, lossy, stopped or failed-over store, made on demand.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// What the relay does to the traffic now.
#[derive(Debug)]
struct Faults {
    /// Added before each chunk is passed on, in each direction, in microseconds.
    latency_micros: AtomicU64,
    /// The percentage of chunks held back as TCP holds back data behind a lost segment.
    loss_percent: AtomicU64,
    /// New connections are closed at once.
    down: AtomicBool,
    /// Where new connections go.
    target: Mutex<SocketAddr>,
}

/// The least retransmission timeout of Linux's TCP: the stall of one lost segment.
const MIN_RTO: Duration = Duration::from_millis(200);

impl Faults {
    /// How long the next chunk is held: the latency, and a retransmission timeout for each
    /// time it is "lost" (doubling, as TCP backs off).
    fn delay(&self) -> Duration {
        let mut delay = Duration::from_micros(self.latency_micros.load(Ordering::Relaxed));
        let loss = self.loss_percent.load(Ordering::Relaxed);
        let mut rto = MIN_RTO;
        while loss > 0 && rand::random_range(0..100) < loss {
            delay += rto;
            rto *= 2;
        }
        delay
    }

    /// Where a new connection goes now.
    fn target(&self) -> SocketAddr {
        *self.target.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A relay from a port on 127.0.0.1 to a target server, which can be switched (a failover that
/// clients, keeping one address, do not see but as cut connections).
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
        let faults = Arc::new(Faults {
            latency_micros: AtomicU64::new(0),
            loss_percent: AtomicU64::new(0),
            down: AtomicBool::new(false),
            target: Mutex::new(target),
        });
        let (cuts, _) = watch::channel(0);
        let task = tokio::spawn(accept(listener, Arc::clone(&faults), cuts.clone()));
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

    /// Holds back `percent` of the chunks (0 to 100) as a lost segment holds back a TCP
    /// stream: by a retransmission timeout (200 ms, Linux's least), doubled each time the
    /// retransmission is lost too. A relay of a byte stream cannot drop bytes; this is what
    /// packet loss does to the stream its reader sees.
    pub fn set_loss(&self, percent: u8) {
        let percent = u64::from(percent.min(100));
        self.faults.loss_percent.store(percent, Ordering::Relaxed);
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

    /// Switches the relay to `target`, as a failover does: new connections go there, and every
    /// open one (to the old target) is cut, so that no client goes on talking to the old server.
    pub fn set_target(&self, target: SocketAddr) {
        *self.faults.target.lock().unwrap_or_else(|e| e.into_inner()) = target;
        self.cut();
    }

    /// Where new connections go now.
    pub fn target(&self) -> SocketAddr {
        self.faults.target()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
        self.cut();
    }
}

async fn accept(listener: TcpListener, faults: Arc<Faults>, cuts: watch::Sender<u64>) {
    while let Ok((client, _)) = listener.accept().await {
        if faults.down.load(Ordering::Relaxed) {
            drop(client);
            continue;
        }
        // The target when the connection came: a switch after this cuts it.
        let (faults, mut cut, target) = (Arc::clone(&faults), cuts.subscribe(), faults.target());
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
        let delay = faults.delay();
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        if to.write_all(&buffer[..n]).await.is_err() {
            return;
        }
    }
}
