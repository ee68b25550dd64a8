//! The ELink form: `ELink::decode`, `Gdid::from_elink` and `Gdid::parse_any` on arbitrary strings.
//!
//! - never panics, and formatting the error never panics;
//! - `Gdid::from_elink` agrees with `ELink::decode` (same id, same error);
//! - a decoded link re-encodes, with every seed, within 1024 characters and decodes back to the
//!   same id and metadata (the text itself may differ: case, dashes, non-minimal lengths);
//! - the strict `FromStr` of `Gdid` never reads an ELink: anything it accepts is colon text or hex.
#![no_main]

use gdid_core::{ELink, Gdid, GdidSymbol};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Invalid UTF-8 is still worth decoding: lossy decoding keeps the fuzzer's mutations useful.
    let text = String::from_utf8_lossy(data);
    let s: &str = &text;

    let decoded = ELink::decode(s);
    assert_eq!(
        Gdid::from_elink(s),
        decoded.as_ref().map(ELink::id).map_err(|e| *e),
        "from_elink and decode disagree on {s:?}"
    );
    if let Ok(id) = s.parse::<Gdid>() {
        let t = s.trim();
        let hex = t
            .strip_prefix("0x")
            .or_else(|| t.strip_prefix("0X"))
            .unwrap_or(t);
        assert!(
            t.contains(':') || hex.bytes().all(|b| b.is_ascii_hexdigit()),
            "FromStr read {s:?}, neither colon text nor hex, as {id}"
        );
    }
    let any = GdidSymbol::parse_any(s);
    assert_eq!(
        any.as_ref().map(GdidSymbol::gdid).map_err(|e| *e),
        Gdid::parse_any(s)
    );
    if let Ok(symbol) = any {
        assert_eq!(symbol.symbol(), s.trim());
        let _ = symbol.to_string();
    }

    match decoded {
        Ok(link) => round_trip(&link),
        Err(e) => {
            let _ = e.to_string();
        }
    }
});

fn round_trip(link: &ELink) {
    for seed in 0..ELink::SEEDS {
        let text = link.encode(seed);
        assert_eq!(text.len(), link.encoded_len());
        assert!(text.len() <= ELink::MAX_LEN, "{} characters", text.len());
        assert_eq!(ELink::decode(&text).as_ref(), Ok(link), "{text}");
        assert_eq!(
            ELink::decode(&text.to_lowercase()).as_ref(),
            Ok(link),
            "{text}"
        );
        if link.metadata().is_empty() {
            assert_eq!(link.id().to_elink(seed), text);
        }
    }
}
