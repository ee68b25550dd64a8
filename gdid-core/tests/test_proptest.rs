//! Property tests: every form round-trips, `Ord` is byte order, decoders never panic.

use gdid_core::proptest::{any_gdid, gdid_of_authority, gdid_of_era, increasing};
use gdid_core::{DecodeError, Gdid};
use proptest::prelude::*;

/// A variable-length form: its name, its encoder into a `Vec`, its encoded length, its decoder.
type VarintForm = (
    &'static str,
    fn(&Gdid, &mut Vec<u8>),
    fn(&Gdid) -> usize,
    fn(&[u8]) -> Result<(Gdid, usize), DecodeError>,
);

const VARINT_FORMS: [VarintForm; 2] = [
    (
        "leb",
        |id, out| id.encode_leb(out),
        Gdid::leb_len,
        Gdid::decode_leb,
    ),
    (
        "compact",
        |id, out| id.encode_compact(out),
        Gdid::compact_len,
        Gdid::decode_compact,
    ),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4096))]

    #[test]
    fn text_forms_round_trip(id in any_gdid()) {
        for text in [id.to_string(), format!("{id:x}"), format!("{id:X}"), format!("{id:#x}")] {
            prop_assert_eq!(text.parse::<Gdid>(), Ok(id), "{}", text);
        }
        let mut buf = [0u8; Gdid::TEXT_MAX_LEN];
        prop_assert_eq!(id.encode_text(&mut buf), id.to_string());
    }

    #[test]
    fn bytes_round_trip(id in any_gdid()) {
        prop_assert_eq!(Gdid::from_slice(&id.to_bytes()), Ok(id));
        prop_assert_eq!(Gdid::from_raw(id.era(), id.id64()), id);
        prop_assert_eq!(Gdid::from_parts(id.era(), id.authority(), id.counter()), Ok(id));
    }

    #[test]
    fn variable_length_forms_round_trip(id in any_gdid()) {
        for (name, encode, len, decode) in VARINT_FORMS {
            let mut encoded = Vec::new();
            encode(&id, &mut encoded);
            prop_assert_eq!(encoded.len(), len(&id), "{}", name);
            prop_assert_eq!(decode(&encoded), Ok((id, encoded.len())), "{}", name);
        }
        if id.era() < 128 && id.counter() < (1 << 31) {
            prop_assert!(id.compact_len() <= 6);
        }
    }

    #[test]
    fn ord_is_byte_order_and_field_order(a in any_gdid(), b in any_gdid()) {
        let by_fields = (a.era(), a.authority(), a.counter()).cmp(&(b.era(), b.authority(), b.counter()));
        prop_assert_eq!(a.cmp(&b), by_fields);
        prop_assert_eq!(a.as_bytes().cmp(b.as_bytes()), by_fields);
        prop_assert_eq!(format!("{a:x}").cmp(&format!("{b:x}")), by_fields);
        prop_assert_eq!(
            a.cmp_ignoring_authority(&b),
            (a.era(), a.counter()).cmp(&(b.era(), b.counter()))
        );
    }

    #[test]
    fn the_strategies_keep_their_word(
        of_era in gdid_of_era(7),
        of_authority in gdid_of_authority(3),
        run in increasing(2..40),
    ) {
        prop_assert_eq!(of_era.era(), 7);
        prop_assert_eq!(of_authority.authority(), 3);
        prop_assert!(run.len() >= 2);
        prop_assert!(run.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn decoders_never_panic_and_accept_only_canonical_input(bytes in proptest::collection::vec(any::<u8>(), 0..24)) {
        for (name, encode, _, decode) in VARINT_FORMS {
            if let Ok((id, used)) = decode(&bytes) {
                let mut again = Vec::new();
                encode(&id, &mut again);
                prop_assert_eq!(&again[..], &bytes[..used], "{}", name);
            }
        }
        match Gdid::from_slice(&bytes) {
            Ok(id) => prop_assert_eq!(&id.to_bytes()[..], &bytes[..]),
            Err(e) => prop_assert_eq!(e.found, bytes.len()),
        }
    }

    #[test]
    fn the_parser_never_panics_and_reparses_what_it_accepts(text in "\\PC{0,40}|[0-9: xX\\t]{0,40}|[0-9a-fA-F]{20,28}") {
        if let Ok(id) = text.parse::<Gdid>() {
            prop_assert_eq!(id.to_string().parse::<Gdid>(), Ok(id));
        }
    }
}
