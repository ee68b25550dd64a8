//! The 12-byte form: `Gdid::from_slice` / `TryFrom<&[u8]>`, and every encoder of an arbitrary id.
//!
//! - `from_slice` succeeds exactly for 12-byte input and `to_bytes` gives the input back;
//! - the field accessors agree with the documented layout (era u32 BE, authority 4 bits, counter
//!   60 bits) and `from_parts`/`from_raw` rebuild the same id;
//! - any 12 bytes round-trip through every other form (text, hex, leb, compact, BSON);
//! - with 24 bytes (two ids), `Ord` is the byte order and `cmp_ignoring_authority` is
//!   (era, counter) order.
#![no_main]

use gdid_core::{COUNTER_MAX, Gdid};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let parsed = Gdid::from_slice(data);
    assert_eq!(Gdid::try_from(data), parsed);
    match parsed {
        Ok(g) => {
            assert_eq!(data.len(), Gdid::SIZE);
            assert_eq!(&g.to_bytes()[..], data);
            assert_eq!(&g.as_bytes()[..], data);
            assert_eq!(&g.into_bytes()[..], data);
            assert_eq!(g.as_ref(), data);
        }
        Err(e) => {
            assert_ne!(data.len(), Gdid::SIZE, "12 bytes rejected: {e}");
            assert_eq!((e.expected, e.found), (Gdid::SIZE, data.len()));
            let _ = e.to_string();
        }
    }

    if let Some(first) = data.first_chunk::<12>() {
        check_every_form(Gdid::from_bytes(*first));
    }
    if data.len() == 2 * Gdid::SIZE {
        let (a, b) = data.split_at(Gdid::SIZE);
        let (a, b) = (Gdid::from_slice(a).unwrap(), Gdid::from_slice(b).unwrap());
        assert_eq!(a.cmp(&b), a.as_bytes().cmp(b.as_bytes()));
        assert_eq!(
            a.cmp(&b),
            (a.era(), a.authority(), a.counter()).cmp(&(b.era(), b.authority(), b.counter()))
        );
        assert_eq!(
            a.cmp_ignoring_authority(&b),
            (a.era(), a.counter()).cmp(&(b.era(), b.counter()))
        );
    }
});

fn check_every_form(g: Gdid) {
    let b = g.to_bytes();
    // Layout.
    assert_eq!(g.era(), u32::from_be_bytes([b[0], b[1], b[2], b[3]]));
    let id64 = u64::from_be_bytes([b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11]]);
    assert_eq!(g.id64(), id64);
    assert_eq!(u64::from(g.authority()), id64 >> 60);
    assert_eq!(g.counter(), id64 & COUNTER_MAX);
    assert!(g.authority() <= 15 && g.counter() <= COUNTER_MAX);
    assert_eq!(Gdid::from_parts(g.era(), g.authority(), g.counter()), Ok(g));
    assert_eq!(Gdid::from_raw(g.era(), g.id64()), g);
    assert_eq!(Gdid::from(b), g);
    assert_eq!(<[u8; 12]>::from(g), b);
    assert_eq!(g.is_zero(), b == [0; 12]);

    // Text and hex.
    assert_eq!(g.to_string().parse::<Gdid>(), Ok(g));
    assert_eq!(format!("{g:x}").parse::<Gdid>(), Ok(g));
    assert_eq!(format!("{g:#X}").parse::<Gdid>(), Ok(g));

    // leb and compact, into a Vec and into a slice.
    let mut leb = Vec::new();
    g.encode_leb(&mut leb);
    assert_eq!(leb.len(), g.leb_len());
    assert_eq!(Gdid::decode_leb(&leb), Ok((g, leb.len())));
    let mut compact = Vec::new();
    g.encode_compact(&mut compact);
    assert_eq!(compact.len(), g.compact_len());
    assert_eq!(Gdid::decode_compact(&compact), Ok((g, compact.len())));
    let mut out = [0u8; Gdid::VARINT_MAX_LEN];
    assert_eq!(g.write_leb(&mut out), Ok(leb.len()));
    assert_eq!(&out[..leb.len()], &leb[..]);
    assert_eq!(g.write_compact(&mut out), Ok(compact.len()));
    assert_eq!(&out[..compact.len()], &compact[..]);

    // BSON.
    let value = bson::Bson::from(g);
    assert_eq!(Gdid::try_from(&value), Ok(g));
}
