//! schemars (feature `schemars`): the JSON Schema of a `Gdid` admits every id serde writes and
//! no string serde refuses, checked by a JSON Schema validator (the `jsonschema` crate).

use std::sync::LazyLock;

use gdid_core::proptest::any_gdid;
use gdid_core::{AUTHORITY_MAX, COUNTER_MAX, Gdid};
use proptest::prelude::*;
use schemars::{JsonSchema, schema_for};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// A validator of the schema of `Gdid`, as a user's program generates it (made once: the
/// property tests below ask it thousands of times).
fn gdid_validator() -> &'static jsonschema::Validator {
    static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
        jsonschema::validator_for(&schema_for!(Gdid).to_value()).expect("a valid JSON Schema")
    });
    &VALIDATOR
}

/// What serde makes of `text` in JSON: the id, or `None` when it refuses it.
fn serde_reads(text: &str) -> Option<Gdid> {
    serde_json::from_value(json!(text)).ok()
}

/// The canonical forms: the colon text serde writes, and 24 hex digits with or without `0x`.
fn is_canonical(text: &str, id: Gdid) -> bool {
    let hex = text
        .strip_prefix("0x")
        .or_else(|| text.strip_prefix("0X"))
        .unwrap_or(text);
    text == id.to_string() || (hex.len() == 24 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
}

#[test]
fn the_schema_is_a_pattern_string_named_gdid() {
    let schema = schema_for!(Gdid).to_value();
    assert_eq!(schema["type"], "string");
    assert_eq!(schema["title"], "Gdid");
    let pattern = schema["pattern"].as_str().expect("a pattern");
    assert!(
        pattern.starts_with('^') && pattern.ends_with('$'),
        "{pattern}"
    );
    assert_eq!(schema["examples"], json!(["1293:3:57"]));
    assert_eq!(Gdid::schema_name(), "Gdid");
}

#[test]
fn what_serde_refuses_the_schema_rejects() {
    let validator = gdid_validator();
    for text in [
        "",
        "1:2",
        "1:2:3:4",
        "1:16:1",
        "4294967296:0:0",
        "0:0:1152921504606846976",
        "99999999999:0:0",
        "-1:0:0",
        "1:2:x",
        "0000050d300000000000003",
        "0000050d30000000000000390",
        "0000050d300000000000003g",
        "0x0000050d300000000000003",
    ] {
        assert_eq!(serde_reads(text), None, "serde reads {text:?}");
        assert!(
            !validator.is_valid(&json!(text)),
            "the schema admits {text:?}"
        );
    }
    for not_a_string in [
        json!(1293),
        json!(null),
        json!([0, 0, 5]),
        json!({"era": 1}),
    ] {
        assert!(!validator.is_valid(&not_a_string), "{not_a_string}");
    }
}

#[test]
fn the_bounds_of_each_part_are_the_parsers() {
    let validator = gdid_validator();
    for text in [
        "0:0:0",
        "4294967295:15:1152921504606846975",
        "4294967295:0:0",
        "0:15:0",
        "0:0:1152921504606846975",
        "1293:3:57",
        "0000050d3000000000000039",
        "0x0000050D3000000000000039",
    ] {
        assert!(serde_reads(text).is_some(), "{text}");
        assert!(
            validator.is_valid(&json!(text)),
            "the schema rejects {text:?}"
        );
    }
}

#[test]
fn an_optional_id_is_the_id_or_null() {
    #[derive(Serialize, Deserialize, JsonSchema)]
    struct Order {
        id: Gdid,
        parent: Option<Gdid>,
    }
    let schema = schema_for!(Order).to_value();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let order = Order {
        id: "1:2:3".parse().unwrap(),
        parent: None,
    };
    assert!(validator.is_valid(&serde_json::to_value(&order).unwrap()));
    assert!(validator.is_valid(&json!({"id": "1:2:3", "parent": "1:2:1"})));
    assert!(!validator.is_valid(&json!({"id": "1:2:3", "parent": "1:16:1"})));
    assert!(!validator.is_valid(&json!({"id": null, "parent": null})));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2048))]

    #[test]
    fn every_id_serde_writes_the_schema_admits(id in any_gdid()) {
        let validator = gdid_validator();
        let written: Value = serde_json::to_value(id).unwrap();
        prop_assert!(validator.is_valid(&written), "{}", written);
        let hex = json!(format!("{id:x}"));
        prop_assert!(validator.is_valid(&hex), "{}", hex);
    }

    /// Strings shaped like ids, numbers at and past every bound included: the schema admits
    /// one exactly when serde reads it and it is canonical.
    #[test]
    fn the_schema_admits_exactly_the_canonical_ids(
        text in prop_oneof![
            colon_text(),
            "[0-9]{1,11}:[0-9]{1,3}:[0-9]{1,20}|(0[xX])?[0-9a-fA-F]{23,25}|[0-9: ]{1,12}",
        ]
    ) {
        let admitted = gdid_validator().is_valid(&json!(text));
        let canonical = serde_reads(&text).is_some_and(|id| is_canonical(&text, id));
        prop_assert_eq!(admitted, canonical, "{:?}", text);
    }
}

/// `era:authority:counter` with each number near its bound, in range or just past it, and
/// now and then a leading zero or a space (which serde reads and the schema does not admit).
fn colon_text() -> impl Strategy<Value = String> {
    let near = |max: u64| prop_oneof![0..=max, max.saturating_sub(3)..=max + 3, Just(0)];
    let era = near(u64::from(u32::MAX));
    let authority = near(u64::from(AUTHORITY_MAX));
    let counter = near(COUNTER_MAX);
    let decoration = prop_oneof![4 => Just(""), 1 => Just("0"), 1 => Just(" ")];
    (era, authority, counter, decoration).prop_map(|(era, authority, counter, decoration)| {
        format!("{decoration}{era}:{authority}:{counter}")
    })
}
