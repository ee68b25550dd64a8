//! The text forms: `Gdid::try_parse` / `FromStr` on arbitrary strings.
//!
//! - never panics, and formatting the error never panics;
//! - agrees with a plain reference parser written with `std` (accepts the same inputs, same id);
//! - `Display` (colon form), `{:x}`, `{:X}`, `{:#x}`, `{:#X}` and the `encode_*` buffers all parse
//!   back to the same id.
#![no_main]

use gdid_core::{AUTHORITY_MAX, COUNTER_MAX, Gdid};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    // Invalid UTF-8 is still worth parsing: lossy decoding keeps the fuzzer's mutations useful.
    let text = String::from_utf8_lossy(data);
    let s: &str = &text;

    let parsed = Gdid::try_parse(s);
    assert_eq!(
        s.parse::<Gdid>(),
        parsed,
        "FromStr and try_parse disagree on {s:?}"
    );
    assert_eq!(
        parsed.as_ref().ok(),
        reference(s).as_ref(),
        "try_parse and the reference parser disagree on {s:?}"
    );

    match parsed {
        Ok(g) => round_trip(g),
        Err(e) => {
            let _ = e.to_string();
        }
    }
});

fn round_trip(g: Gdid) {
    let colon = g.to_string();
    assert_eq!(colon.parse::<Gdid>(), Ok(g), "colon form {colon:?}");
    assert_eq!(
        colon,
        format!("{}:{}:{}", g.era(), g.authority(), g.counter())
    );
    let mut buf = [0u8; Gdid::TEXT_MAX_LEN];
    assert_eq!(g.encode_text(&mut buf), colon);

    for hex in [
        format!("{g:x}"),
        format!("{g:X}"),
        format!("{g:#x}"),
        format!("{g:#X}"),
    ] {
        assert_eq!(hex.parse::<Gdid>(), Ok(g), "hex form {hex:?}");
    }
    let lower = format!("{g:x}");
    assert_eq!(lower.len(), Gdid::HEX_LEN);
    let expected: String = g.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(lower, expected);
    let mut buf = [0u8; Gdid::HEX_LEN];
    assert_eq!(g.encode_hex_lower(&mut buf), lower);
    assert_eq!(g.encode_hex_upper(&mut buf), lower.to_ascii_uppercase());
    // Width and fill are honoured and still parse (padding is whitespace).
    assert_eq!(format!("{g:>40}").parse::<Gdid>(), Ok(g));
}

/// An independent, obviously-correct (and slow) parser of the documented grammar.
fn reference(s: &str) -> Option<Gdid> {
    let ws = |c: char| c.is_ascii_whitespace();
    let segments: Vec<&str> = s.split(':').collect();
    match segments.len() {
        1 => {
            let t = s.trim_matches(ws);
            let t = t
                .strip_prefix("0x")
                .or_else(|| t.strip_prefix("0X"))
                .unwrap_or(t);
            if t.len() != 24 || !t.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            let value = u128::from_str_radix(t, 16).ok()?;
            let bytes = value.to_be_bytes();
            let mut out = [0u8; 12];
            out.copy_from_slice(&bytes[4..]);
            Some(Gdid::from_bytes(out))
        }
        3 => {
            let mut values = [0u64; 3];
            let maxes = [u64::from(u32::MAX), u64::from(AUTHORITY_MAX), COUNTER_MAX];
            for ((segment, value), max) in segments.iter().zip(&mut values).zip(maxes) {
                let t = segment.trim_matches(ws);
                if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                let digits = t.trim_start_matches('0');
                if digits.len() > 20 {
                    return None;
                }
                let v: u128 = if digits.is_empty() {
                    0
                } else {
                    digits.parse().ok()?
                };
                if v > u128::from(max) {
                    return None;
                }
                *value = u64::try_from(v).ok()?;
            }
            let era = u32::try_from(values[0]).ok()?;
            let authority = u8::try_from(values[1]).ok()?;
            Gdid::from_parts(era, authority, values[2]).ok()
        }
        _ => None,
    }
}
