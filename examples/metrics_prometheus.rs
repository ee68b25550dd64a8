//! The runway in Prometheus: a generator's metrics (feature `metrics` of the `gdid` crate) through
//! the Prometheus exporter. Issues ids from the example store (a SQLite file unless
//! `GDID_ID_STORE` names another), closes the generator (its unused ids go back to the store), and
//! prints what a scrape of `/metrics` would return. A service would rather install the exporter's
//! HTTP listener (`PrometheusBuilder::new().with_http_listener(addr).install()`) and let
//! Prometheus scrape it.
//!
//! ```sh
//! cargo run -p gdid-examples --example metrics_prometheus            # 10,000 ids
//! cargo run -p gdid-examples --example metrics_prometheus -- 100000
//! ```

use std::error::Error;
use std::process::ExitCode;

use gdid_examples::{exit_status, id_store, open_id_store};
use metrics_exporter_prometheus::PrometheusBuilder;

fn main() -> ExitCode {
    exit_status("metrics_prometheus", run())
}

#[tokio::main(flavor = "current_thread")]
async fn run() -> Result<(), Box<dyn Error>> {
    let count: u64 = std::env::args().nth(1).map_or(Ok(10_000), |n| n.parse())?;
    // Before the generator is built: it registers its metrics with the recorder installed then.
    let prometheus = PrometheusBuilder::new().install_recorder()?;

    let store = open_id_store(&id_store()?).await?;
    let ids = store.block_generator("shop", "metered").build()?;
    for _ in 0..count {
        ids.next_id().await?;
    }
    let given_back = ids.close().await?;
    eprintln!("{count} ids issued, {given_back} given back to the store");

    print!("{}", prometheus.render());
    Ok(())
}
