//! A driver error is shown as what went wrong (the driver's error kind, redacted), not with the
//! labels, source and server response the driver's own `Display` adds in `Debug` form.

use gdid_engine::{Authority, Pick, RangeLayout};
use gdid_mongo::{MongoAuthority, MongoShardedCounter};

/// No noise and no password in `message`, which says what failed.
fn assert_plain(message: &str) {
    for noise in ["labels:", "source:", "server response:", "Kind:", "hunter2"] {
        assert!(!message.contains(noise), "{noise:?} in {message}");
    }
    assert!(message.contains("127.0.0.1:1"), "{message}");
}

#[tokio::test]
async fn driver_errors_are_shown_without_the_driver_s_debug_noise() {
    let uri =
        "mongodb://app:hunter2@127.0.0.1:1/?directConnection=true&serverSelectionTimeoutMS=100";
    let client = mongodb::Client::with_uri_str(uri).await.unwrap();
    let database = client.database("gdid_test");
    let authority = MongoAuthority::new(&database, "counters", 1).unwrap();
    let error = authority.allocate("s", "q", 1).await.unwrap_err();
    assert_plain(&error.to_string());
    let layout = RangeLayout::new(1, 10, 2).unwrap();
    let error = MongoShardedCounter::create(&database, "ranges", "q", layout, Pick::Random)
        .await
        .map(drop)
        .unwrap_err();
    assert_plain(&error.to_string());
    let error = database
        .run_command(bson::doc! { "ping": 1 })
        .await
        .map(drop)
        .unwrap_err();
    assert_plain(&gdid_mongo::Error::from(error).to_string());
}
