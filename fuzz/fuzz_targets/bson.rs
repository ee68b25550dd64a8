//! BSON: `TryFrom<RawBsonRef>`, `TryFrom<&Bson>` and the `gdid_core::bson::binary` serde helper on
//! arbitrary bytes read as a BSON document.
//!
//! - never panics;
//! - for every element (nested documents and arrays included), `Gdid::try_from(RawBsonRef)` and
//!   `Gdid::try_from(&Bson)` of the same element agree, and an accepted id converts to
//!   `Bson::from(g)` (a `Binary` of subtype 0x80 holding the 12 bytes) and back to the same id;
//! - when a document deserializes into a struct whose field uses the helper, `serialize_to_vec`
//!   writes a 0x80 binary, and deserializing that again (and through `serialize_to_document`)
//!   gives the same id.
#![no_main]

use bson::spec::BinarySubtype;
use bson::{Bson, RawBsonRef, RawDocument};
use gdid_core::Gdid;
use libfuzzer_sys::fuzz_target;
use serde::{Deserialize, Serialize};

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Wrapper {
    #[serde(with = "gdid_core::bson::binary")]
    id: Gdid,
}

fuzz_target!(|data: &[u8]| {
    if let Ok(doc) = RawDocument::from_bytes(data) {
        for element in doc.iter() {
            let Ok((_key, value)) = element else { break };
            check_value(value, 0);
        }
    }

    if let Ok(wrapper) = bson::deserialize_from_slice::<Wrapper>(data) {
        let g = wrapper.id;
        // When the raw element itself holds an id, it is the same one.
        if let Ok(Some(raw)) = RawDocument::from_bytes(data).and_then(|doc| doc.get("id")) {
            if let Ok(from_raw) = Gdid::try_from(raw) {
                assert_eq!(
                    from_raw, g,
                    "helper and TryFrom<RawBsonRef> disagree on {raw:?}"
                );
            }
        }

        let bytes = bson::serialize_to_vec(&wrapper).expect("serialize_to_vec failed");
        let written = RawDocument::from_bytes(&bytes)
            .expect("serialize_to_vec wrote an invalid document")
            .get("id")
            .expect("serialize_to_vec wrote an invalid element")
            .expect("serialize_to_vec wrote no id");
        match written {
            RawBsonRef::Binary(b) => {
                assert_eq!(b.subtype, BinarySubtype::UserDefined(0x80));
                assert_eq!(b.bytes, &g.to_bytes()[..]);
            }
            other => panic!("serialize_to_vec wrote {other:?} for {g}"),
        }
        let again: Wrapper = bson::deserialize_from_slice(&bytes).expect("re-deserialize failed");
        assert_eq!(again.id, g);

        let document = bson::serialize_to_document(&wrapper).expect("serialize_to_document failed");
        assert_eq!(document.get("id"), Some(&Bson::from(g)));
        let again: Wrapper =
            bson::deserialize_from_document(document).expect("deserialize_from_document failed");
        assert_eq!(again.id, g);
    }
});

fn check_value(value: RawBsonRef<'_>, depth: usize) {
    let from_raw = Gdid::try_from(value);
    if let Ok(owned) = Bson::try_from(value) {
        let from_owned = Gdid::try_from(&owned);
        assert_eq!(
            from_raw.as_ref().ok(),
            from_owned.as_ref().ok(),
            "TryFrom<RawBsonRef> and TryFrom<&Bson> disagree on {value:?}"
        );
    }
    match from_raw {
        Ok(g) => {
            let written = Bson::from(g);
            match &written {
                Bson::Binary(b) => {
                    assert_eq!(b.subtype, BinarySubtype::UserDefined(0x80));
                    assert_eq!(b.bytes, g.to_bytes());
                }
                other => panic!("Bson::from({g}) is {other:?}"),
            }
            assert_eq!(Gdid::try_from(&written), Ok(g));
            if let Bson::Binary(b) = &written {
                assert_eq!(Gdid::try_from(RawBsonRef::Binary(b.as_raw_binary())), Ok(g));
            }
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }

    // Walk nested documents and arrays (bounded: libFuzzer inputs are small anyway).
    if depth < 32 {
        match value {
            RawBsonRef::Document(doc) => {
                for element in doc.iter() {
                    let Ok((_key, v)) = element else { break };
                    check_value(v, depth + 1);
                }
            }
            RawBsonRef::Array(array) => {
                for element in array {
                    let Ok(v) = element else { break };
                    check_value(v, depth + 1);
                }
            }
            _ => {}
        }
    }
}
