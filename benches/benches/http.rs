//! One round trip to an authority served over HTTP: `RemoteAuthority::allocate` (a
//! `POST /v1/blocks` of 1,000, one SQLite write before the reply) and `Remote::ids` (a
//! `POST /v1/ids` of one id, from the server's own generator, no store round trip), against an
//! in-process `gdid_http::server::Server` on 127.0.0.1 over a `gdid::Store` on a SQLite file, one
//! request at a time on one pooled connection. Beside them, for the cost of HTTP itself, the same
//! allocation straight on the store, without the server.
//!
//! `cargo bench -p gdid-benches --bench http`
//!
//! The server and the client run on one 2-worker tokio runtime, the client's calls in a task of
//! their own: on a 2-core machine they share the cores, as `scripts/bench-http`'s server and wrk
//! do. The load test with many connections at once is `scripts/bench-http`.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, Throughput, criterion_group, criterion_main};
use gdid::Store;
use gdid_core::Form;
use gdid_engine::{Authority, DynAuthority};
use gdid_http::client::{RemoteAuthority, RemoteOptions};
use gdid_http::server::{Server, Tokens};
use tokio::sync::oneshot;

const TOKEN: &str = "bench-token-0123456789abcdef";
const BLOCK: u64 = 1_000;

/// What the benchmarks use, and what stops the server when dropped.
struct Served {
    runtime: tokio::runtime::Runtime,
    store: Arc<dyn DynAuthority>,
    remote: RemoteAuthority,
    dir: PathBuf,
    stop: Option<oneshot::Sender<()>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A server of a fresh SQLite file as authority 1, listening on a free port of 127.0.0.1, and a
/// client connected to it.
fn serve() -> Served {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = std::env::temp_dir().join(format!("gdid-bench-http-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let url = format!("sqlite:{}", dir.join("ids.sqlite").display());
    let (stop, stopped) = oneshot::channel::<()>();
    let (store, remote) = runtime.block_on(async {
        let store = Store::options().authority(1).open(&url).await.unwrap();
        let store = store.authority().unwrap();
        let tokens = Tokens::parse(&format!("{TOKEN} bench")).unwrap();
        let server = Server::builder(store.clone(), tokens).build();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move {
            server
                .serve(listener, None, async {
                    let _ = stopped.await;
                })
                .await
        });
        let remote = RemoteAuthority::connect(&address, &RemoteOptions::default().token(TOKEN))
            .await
            .unwrap();
        (store, remote)
    });
    Served {
        runtime,
        store,
        remote,
        dir,
        stop: Some(stop),
    }
}

/// Benchmarks `call` in `group` as `name`: each of criterion's iterations awaits `call` once, on
/// a clone of `on`, timed inside a task of `runtime`, as a generator's refill calls its
/// authority. (Driven from a thread outside the runtime, each round trip would add a hand-off
/// between threads: about 20 µs more on this VM.)
fn bench<T, Fut>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    name: &str,
    runtime: &tokio::runtime::Runtime,
    on: &T,
    call: fn(T) -> Fut,
) where
    T: Clone + Send + 'static,
    Fut: Future<Output = ()> + Send + 'static,
{
    group.bench_function(name, |b| {
        b.iter_custom(|iters| {
            let on = on.clone();
            runtime.block_on(async move {
                tokio::spawn(async move {
                    let started = Instant::now();
                    for _ in 0..iters {
                        call(on.clone()).await;
                    }
                    started.elapsed()
                })
                .await
                .unwrap()
            })
        })
    });
}

fn round_trip(c: &mut Criterion) {
    let served = serve();
    let mut group = c.benchmark_group("http");
    group.throughput(Throughput::Elements(1));
    let (runtime, remote) = (&served.runtime, &served.remote);

    // POST /v1/blocks: the store's write and the HTTP round trip.
    bench(
        &mut group,
        "remote_allocate_1000",
        runtime,
        remote,
        |remote| async move {
            black_box(remote.allocate("bench", "blocks", BLOCK).await.unwrap());
        },
    );
    // POST /v1/ids, one id: the HTTP round trip and the server's generator, no store.
    bench(
        &mut group,
        "remote_ids_1",
        runtime,
        remote,
        |remote| async move {
            let ids = remote.remote().ids("bench", "ids", 1, Form::Text).await;
            black_box(ids.unwrap());
        },
    );
    // The same allocation on the store itself: what HTTP adds is the difference.
    bench(
        &mut group,
        "store_allocate_1000",
        runtime,
        &served.store,
        |store| async move {
            black_box(
                store
                    .allocate_boxed("bench", "direct", BLOCK)
                    .await
                    .unwrap(),
            );
        },
    );
    group.finish();
}

criterion_group!(name = http; config = gdid_benches::criterion(5); targets = round_trip);
criterion_main!(http);
