//! The metrics reference (`docs/reference/metrics.md`) lists every series a generator emits, and
//! no other: the names are read back from metrics-util's debugging recorder after a generator
//! was built (every series is registered then) and compared with the reference's table.
#![cfg(feature = "metrics")]

use std::collections::BTreeSet;
use std::path::Path;

use gdid_engine::{BlockGenerator, MemoryAuthority};
use metrics_util::debugging::DebuggingRecorder;

/// The names of every series a generator with two authorities registers.
fn emitted() -> BTreeSet<String> {
    let recorder = DebuggingRecorder::new();
    metrics::with_local_recorder(&recorder, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let ids = BlockGenerator::builder("shop", "orders")
                .authority(MemoryAuthority::new(1))
                .authority(MemoryAuthority::new(2))
                .build()
                .unwrap();
            ids.next_id().await.unwrap();
            ids.close().await.unwrap();
        });
    });
    recorder
        .snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, ..)| key.key().name().to_owned())
        .collect()
}

/// The names in the first column of the reference's table of series: rows `| `gdid_…` | …`.
fn documented(text: &str) -> BTreeSet<String> {
    text.lines()
        .filter_map(|line| line.strip_prefix("| `gdid_"))
        .filter_map(|rest| rest.split_once('`'))
        .map(|(name, _)| format!("gdid_{name}"))
        .collect()
}

#[test]
fn the_metrics_reference_lists_every_series_and_no_other() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/reference/metrics.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let (emitted, documented) = (emitted(), documented(&text));
    assert!(!emitted.is_empty(), "no series recorded");
    let missing: Vec<_> = emitted.difference(&documented).collect();
    assert!(
        missing.is_empty(),
        "emitted but not in {}: {missing:?}",
        path.display()
    );
    let stale: Vec<_> = documented.difference(&emitted).collect();
    assert!(
        stale.is_empty(),
        "in {} but not emitted: {stale:?}",
        path.display()
    );
}
