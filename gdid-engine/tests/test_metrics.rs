//! The runway through the `metrics` facade (feature `metrics`): what a generator records, read
//! back from metrics-util's debugging recorder.

use std::collections::HashMap;
use std::sync::Arc;

use gdid_engine::{BlockGenerator, MemoryAuthority, testing::FaultyAuthority};
use metrics_util::debugging::{DebugValue, DebuggingRecorder};

/// Every metric recorded, as `name{label=value,…}` → value (histograms: their sample count).
fn recorded(recorder: &DebuggingRecorder) -> HashMap<String, f64> {
    recorder
        .snapshotter()
        .snapshot()
        .into_vec()
        .into_iter()
        .map(|(key, _, _, value)| {
            let key = key.key();
            let labels: Vec<String> = key
                .labels()
                .map(|l| format!("{}={}", l.key(), l.value()))
                .collect();
            let value = match value {
                DebugValue::Counter(n) => n as f64,
                DebugValue::Gauge(g) => g.into_inner(),
                DebugValue::Histogram(samples) => samples.len() as f64,
            };
            (format!("{}{{{}}}", key.name(), labels.join(",")), value)
        })
        .collect()
}

#[test]
fn allocations_failovers_ids_and_cover_are_recorded() {
    let recorder = DebuggingRecorder::new();
    let down = Arc::new(FaultyAuthority::new(MemoryAuthority::new(1)));
    down.set_down(true);
    metrics::with_local_recorder(&recorder, || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let ids = BlockGenerator::builder("shop", "orders")
                .authority(Arc::clone(&down))
                .authority(MemoryAuthority::new(2))
                .build()
                .unwrap();
            for _ in 0..100 {
                ids.next_id().await.unwrap();
            }
            ids.close().await.unwrap();
        });
    });
    let m = recorded(&recorder);
    let of = |name: &str, labels: &str| {
        m.get(&format!("{name}{{scope=shop,sequence=orders{labels}}}"))
            .copied()
            .unwrap_or_else(|| panic!("{name}{labels} not recorded: {m:#?}"))
    };
    assert!(of("gdid_ids_taken_total", "") >= 100.0);
    assert!(of("gdid_allocations_total", ",authority=2,outcome=ok") >= 2.0);
    assert!(of("gdid_allocations_total", ",authority=1,outcome=error") >= 1.0);
    assert!(of("gdid_allocation_seconds", ",authority=2,outcome=ok") >= 2.0);
    assert!(of("gdid_failovers_total", ",authority=1") >= 1.0);
    assert_eq!(
        of("gdid_failovers_total", ",authority=2"),
        0.0,
        "the last one asked"
    );
    assert!(of("gdid_block_size", "") >= 16.0);
    assert!(of("gdid_cover_seconds", "") > 0.0);
    let used = of("gdid_counter_space_used_ratio", "");
    assert!(used > 0.0 && used < 1e-20, "{used}");
    assert!(of("gdid_counter_space_seconds_left", "") > 1e15);
}
