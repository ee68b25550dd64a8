//! ELink and GdidSymbol: the upstream Azos/NFX test strings (`ELinkTests.cs`), every seed,
//! metadata, property tests over the whole id range, and decoding arbitrary text without panics.

use gdid_core::{COUNTER_MAX, ELink, ELinkError, Gdid, GdidSymbol, ParseAnyError};
use proptest::prelude::*;

fn gdid(era: u32, authority: u8, counter: u64) -> Gdid {
    Gdid::from_parts(era, authority, counter).unwrap()
}

/// Azos `new ELink(ulong id, …)`: era 0, `id` as the raw low 64 bits.
fn id64(id: u64) -> Gdid {
    Gdid::from_raw(0, id)
}

// ---------------------------------------------------------------------------------------------
// Upstream strings (Azos src/testing/Azos.Tests.Nub/ELinkTests.cs).
// ---------------------------------------------------------------------------------------------

#[test]
fn upstream_exception_csum1() {
    assert_eq!(Gdid::from_elink("TUSHEK-TRTV"), Ok(gdid(7, 12, 0)));
    assert!(matches!(
        Gdid::from_elink("TUSHEK-TOTV"),
        Err(ELinkError::Checksum { .. })
    ));
}

#[test]
fn upstream_exception_csum2_and_csum3() {
    let id = gdid(1_490_109_883, 12, 9_831_762_982_682);
    assert_eq!(Gdid::from_elink("CDHOAL-OKHIRAGNAFIPOMEP-UBBR"), Ok(id));
    for bad in [
        "CDHOAL-OKHIRAGNAFIPOMEP-UBBA",
        "CDHOAL-OKHIREGNAFIPOMEP-UBBR",
    ] {
        assert!(
            matches!(Gdid::from_elink(bad), Err(ELinkError::Checksum { .. })),
            "{bad}: {:?}",
            Gdid::from_elink(bad)
        );
    }
}

#[test]
fn upstream_exception_csum4() {
    let id = gdid(1_490_109_883, 12, 9_831_762_982_682);
    assert_eq!(Gdid::from_elink("KLEMIK-SHENOGEKJAABSUHM-LSLA"), Ok(id));
    assert!(matches!(
        Gdid::from_elink("KLEMIK-SAENOGEKJAABSUHM-LSLA"),
        Err(ELinkError::Checksum { .. })
    ));
}

#[test]
fn upstream_exception_char_length() {
    // "PYYEOP-ABYOIWUFOBSHAMNE-GOOX" without its last syllable: the header announces 10 bytes
    // of era and id, 9 follow.
    assert_eq!(
        Gdid::from_elink("PYYEOP-ABYOIWUFOBSHAMNE-GO"),
        Err(ELinkError::TooShort {
            expected: 13,
            found: 12
        })
    );
    assert!(Gdid::from_elink("PYYEOP-ABYOIWUFOBSHAMNE-GOOX").is_ok());
}

#[test]
fn upstream_exception_invalid_combination() {
    assert_eq!(
        Gdid::from_elink("PYYEOP-XXYOIWUFOBSHAMNE-GOOX"),
        Err(ELinkError::UnknownSyllable {
            first: 'X',
            second: 'X',
            index: 7
        })
    );
}

#[test]
fn upstream_encode_min_and_max() {
    assert_eq!(ELink::new(id64(0)).encode(1), "AIAIAJ-AJ");
    assert_eq!(
        ELink::new(id64(u64::MAX)).encode(1),
        "CHBRHM-VIVIVIVI-VIVIVIVI"
    );
    assert_eq!(id64(u64::MAX), gdid(0, 15, COUNTER_MAX));
}

#[test]
fn upstream_encode_decode_min_and_max() {
    for id in [id64(0), id64(u64::MAX)] {
        assert_eq!(Gdid::from_elink(&id.to_elink(1)), Ok(id));
    }
}

#[test]
fn upstream_decode_various_formatting() {
    for text in [
        "AIAIIW-IW",
        "AIAIIWIW",
        "aiaiiw-iw",
        "AIAIIW IW",
        "aiaiiwiw",
        "ai a i i w iw",
        "ai-a-i-i-w-iw",
        "aIaIIWiw",
        "aIa              IIWiw",
    ] {
        assert_eq!(Gdid::from_elink(text), Ok(id64(123)), "{text:?}");
        assert_eq!(ELink::decode(text), Ok(ELink::new(id64(123))), "{text:?}");
    }
}

#[test]
fn upstream_encode_decode_metadata_even_and_odd() {
    for metadata in [
        &[0x01, 0xfe, 0xda, 0x05][..],
        &[0x01, 0xfe, 0xda, 0x05, 0x07],
    ] {
        let link = ELink::with_metadata(id64(1), metadata.to_vec()).unwrap();
        let read = ELink::decode(&link.encode(1)).unwrap();
        assert_eq!(read.id(), id64(1));
        assert_eq!(read.metadata(), metadata);
    }
}

#[test]
fn upstream_encode_decode_16_seeds() {
    let id = id64(4_999_666_333_111);
    let spellings: std::collections::HashSet<String> =
        (0..ELink::SEEDS).map(|seed| id.to_elink(seed)).collect();
    assert_eq!(spellings.len(), 16);
    for text in &spellings {
        assert_eq!(Gdid::from_elink(text), Ok(id), "{text}");
    }
}

#[test]
fn upstream_encode_decode_all_range() {
    // Azos walks the u64 range with doubling steps up to u64::MAX / 2000, 500 ids at each.
    let step = u64::MAX / 2_000;
    let (mut span, mut inc) = (0u64, 1u64);
    let mut checked = 0;
    while span < u64::MAX - step {
        for i in (0..500).step_by(50) {
            let id = id64(span + i);
            assert_eq!(
                Gdid::from_elink(&id.to_elink(span.to_le_bytes()[0])),
                Ok(id)
            );
            checked += 1;
        }
        inc = if inc >= step { step } else { inc * 2 };
        span += inc;
    }
    assert!(checked > 20_000);
}

#[test]
fn upstream_gdid_encode_decode() {
    for id in [
        gdid(0, 7, 10_678_159_678),
        gdid(230, 15, 67_123_456),
        gdid(0, 2, 123_000),
    ] {
        for seed in 0..16 {
            assert_eq!(Gdid::from_elink(&id.to_elink(seed)), Ok(id));
        }
    }
    let with_metadata = [
        (gdid(0, 3, 1678), &[1u8, 2, 3, 4, 5][..]),
        (gdid(567_333, 3, 167_898_777), &[1, 2, 3, 4, 5]),
        (gdid(27, 15, 200_100_999_666_333_000), b"abc"),
    ];
    for (id, metadata) in with_metadata {
        let link = ELink::with_metadata(id, metadata.to_vec()).unwrap();
        for seed in 0..16 {
            let read = ELink::decode(&link.encode(seed)).unwrap();
            assert_eq!((read.id(), read.metadata()), (id, metadata));
        }
    }
}

#[test]
fn upstream_link_with_metadata_abc() {
    // The comment of GDID_EncodeDecode_4: that link is the id with "abc" spelled with seed 1.
    let id = gdid(27, 15, 200_100_999_666_333_000);
    let read = ELink::decode("CHAGVU-ANHTUGIFNU-TVWETOUF-JOJKJU").unwrap();
    assert_eq!((read.id(), read.metadata()), (id, &b"abc"[..]));
    let link = ELink::with_metadata(id, b"abc".to_vec()).unwrap();
    assert_eq!(link.encode(1), "CHAGVU-ANHTUGIFNU-TVWETOUF-JOJKJU");
    // Gdid::from_elink checks the metadata and drops it.
    assert_eq!(
        Gdid::from_elink("CHAGVU-ANHTUGIFNU-TVWETOUF-JOJKJU"),
        Ok(id)
    );
}

#[test]
fn upstream_strings_are_reproduced_by_the_encoder_with_their_seed() {
    // Each upstream link re-encoded with the seed of its first syllable is the same text.
    for (text, id, seed) in [
        ("TUSHEK-TRTV", gdid(7, 12, 0), 13),
        (
            "CDHOAL-OKHIRAGNAFIPOMEP-UBBR",
            gdid(1_490_109_883, 12, 9_831_762_982_682),
            1,
        ),
        (
            "KLEMIK-SHENOGEKJAABSUHM-LSLA",
            gdid(1_490_109_883, 12, 9_831_762_982_682),
            7,
        ),
        ("AIAIIW-IW", id64(123), 1),
        ("ZAVIFA-YOLO", gdid(1, 1, 123), 15),
        ("AUCKIR-ABASVITILT", gdid(1280, 2, 8_902_382), 0),
    ] {
        assert_eq!(Gdid::from_elink(text), Ok(id), "{text}");
        assert_eq!(id.to_elink(seed), text);
    }
}

// ---------------------------------------------------------------------------------------------
// Errors: what and where.
// ---------------------------------------------------------------------------------------------

#[test]
fn errors_say_what_and_where() {
    let cases: &[(&str, ELinkError, &str)] = &[
        (
            "PYYEOP-XXYOIWUFOBSHAMNE-GOOX",
            ELinkError::UnknownSyllable {
                first: 'X',
                second: 'X',
                index: 7,
            },
            "invalid ELink syllable \"XX\" at byte 7: not in the alphabet",
        ),
        (
            "AIAIIW-Ié",
            ELinkError::UnknownSyllable {
                first: 'I',
                second: 'é',
                index: 7,
            },
            "invalid ELink syllable \"Ié\" at byte 7: not in the alphabet",
        ),
        (
            "AIAIIW-IW\n",
            ELinkError::OddLetters {
                character: '\n',
                index: 9,
            },
            "the ELink has an odd number of letters: '\\n' at byte 9 has no pair",
        ),
        (
            "AIAIIW-I",
            ELinkError::OddLetters {
                character: 'I',
                index: 7,
            },
            "the ELink has an odd number of letters: 'I' at byte 7 has no pair",
        ),
        (
            "",
            ELinkError::Empty,
            "empty ELink: expected syllables such as AIAIIW-IW",
        ),
        (
            " - -",
            ELinkError::Empty,
            "empty ELink: expected syllables such as AIAIIW-IW",
        ),
        (
            "AIAIIW",
            ELinkError::TooShort {
                expected: 4,
                found: 3,
            },
            "the ELink is too short: expected at least 4 syllables, found 3",
        ),
        (
            // lead2 = 0x00: no id bytes.
            "ABABAB-AB",
            ELinkError::SegmentLength {
                era_len: 0,
                id_len: 0,
            },
            "the ELink header announces 0 era bytes (0 to 4) and 0 id bytes (1 to 8)",
        ),
        (
            // Seed 0, lead2 = 0x51 ("GZ"): an era of 5 bytes.
            "ABGZAB-AB",
            ELinkError::SegmentLength {
                era_len: 5,
                id_len: 1,
            },
            "the ELink header announces 5 era bytes (0 to 4) and 1 id bytes (1 to 8)",
        ),
        (
            "TUSHEK-TOTV",
            ELinkError::Checksum {
                found: 242,
                computed: 136,
            },
            "ELink checksum mismatch: the link says 242, its content sums to 136",
        ),
    ];
    for (text, error, message) in cases {
        let got = ELink::decode(text).unwrap_err();
        assert_eq!(got.to_string(), *message, "{text:?}");
        assert_eq!(got, *error, "{text:?}");
        assert_eq!(Gdid::from_elink(text), Err(*error), "{text:?}");
    }
}

#[test]
fn more_than_1024_characters_is_too_long() {
    let long = "AI".repeat(512) + "-";
    assert_eq!(
        ELink::decode(&long),
        Err(ELinkError::TooLong { found: 1025 })
    );
    // Counted in characters, not bytes.
    let accented = "é".repeat(600);
    assert_eq!(
        ELink::decode(&accented),
        Err(ELinkError::UnknownSyllable {
            first: 'é',
            second: 'é',
            index: 0
        })
    );
}

#[test]
fn metadata_beyond_1024_characters_is_refused_both_ways() {
    let id = Gdid::MAX;
    assert_eq!(
        ELink::with_metadata(id, vec![0; 496]),
        Err(ELinkError::MetadataTooLong {
            length: 496,
            max: 495
        })
    );
    // Without dashes the text fits in 1024 characters, but its canonical spelling would not.
    let link = ELink::with_metadata(id, vec![0; 495]).unwrap().encode(0);
    let squeezed = link.replace('-', "") + "ABAB";
    assert!(squeezed.len() <= 1024);
    assert!(matches!(
        ELink::decode(&squeezed),
        Err(ELinkError::Checksum { .. } | ELinkError::MetadataTooLong { .. })
    ));
}

#[test]
fn the_strict_text_parser_does_not_read_elinks() {
    assert!("AUCKIR-ABASVITILT".parse::<Gdid>().is_err());
    assert!(Gdid::try_parse("ZAVIFA-YOLO").is_err());
}

#[test]
fn empty_metadata_is_no_metadata() {
    let id = gdid(1, 1, 123);
    let link = ELink::with_metadata(id, Vec::new()).unwrap();
    assert_eq!(link, ELink::new(id));
    assert_eq!(link.encode(15), "ZAVIFA-YOLO");
    // Azos writes a trailing dash for empty metadata: it reads as no metadata.
    assert_eq!(ELink::decode("ZAVIFA-YOLO-"), Ok(ELink::new(id)));
}

#[test]
fn display_spells_with_seed_0() {
    let link = ELink::new(gdid(1280, 2, 8_902_382));
    assert_eq!(link.to_string(), "AUCKIR-ABASVITILT");
    assert_eq!("auckir-abasvitilt".parse::<ELink>(), Ok(link));
}

// ---------------------------------------------------------------------------------------------
// GdidSymbol.
// ---------------------------------------------------------------------------------------------

#[test]
fn symbol_reads_every_form_and_keeps_the_trimmed_text() {
    let id = gdid(1280, 2, 8_902_382);
    for (input, symbol) in [
        ("1280:2:8902382", "1280:2:8902382"),
        ("  1280:2:8902382\t", "1280:2:8902382"),
        ("0000050020000000000087d6ee", "0000050020000000000087d6ee"),
        ("AUCKIR-ABASVITILT", "AUCKIR-ABASVITILT"),
        (" auckir abasvitilt ", "auckir abasvitilt"),
    ] {
        let hex_ok = format!("{id:x}");
        let input = input.replace("0000050020000000000087d6ee", &hex_ok);
        let symbol = symbol.replace("0000050020000000000087d6ee", &hex_ok);
        let read = GdidSymbol::parse_any(&input).unwrap();
        assert_eq!(read.gdid(), id, "{input:?}");
        assert_eq!(read.symbol(), symbol, "{input:?}");
        assert_eq!(read.to_string(), format!("1280:2:8902382::'{symbol}'"));
    }
}

#[test]
fn symbol_reports_the_error_of_the_form_the_input_looks_like() {
    assert_eq!(
        GdidSymbol::parse_any("1:16:0").unwrap_err().to_string(),
        "the authority segment at byte 2 is out of range: the maximum is 15"
    );
    assert_eq!(
        GdidSymbol::parse_any("0x123").unwrap_err().to_string(),
        "expected 24 hex digits (optionally after 0x), found 3"
    );
    assert_eq!(
        GdidSymbol::parse_any("TUSHEK-TOTV")
            .unwrap_err()
            .to_string(),
        "ELink checksum mismatch: the link says 242, its content sums to 136"
    );
    assert!(matches!(
        GdidSymbol::parse_any("hello world"),
        Err(ParseAnyError::ELink(_))
    ));
    assert_eq!(GdidSymbol::parse_any(" "), Err(ParseAnyError::Empty));
}

#[test]
fn symbols_of_one_id_differ_by_text() {
    let a = GdidSymbol::parse_any("AUCKIR-ABASVITILT").unwrap();
    let b = GdidSymbol::parse_any("auckir-abasvitilt").unwrap();
    assert_eq!(a.gdid(), b.gdid());
    assert_ne!(a, b);
    assert_eq!(a, GdidSymbol::new(a.gdid(), "AUCKIR-ABASVITILT"));
}

#[cfg(feature = "serde")]
mod symbol_serde {
    use super::*;

    #[test]
    fn json_is_gdid_and_sym() {
        let symbol = GdidSymbol::parse_any("AUCKIR-ABASVITILT").unwrap();
        let json = serde_json::to_string(&symbol).unwrap();
        assert_eq!(
            json,
            r#"{"gdid":"1280:2:8902382","sym":"AUCKIR-ABASVITILT"}"#
        );
        assert_eq!(serde_json::from_str::<GdidSymbol>(&json).unwrap(), symbol);
        let reordered = r#"{"sym":"AUCKIR-ABASVITILT","extra":1,"gdid":"1280:2:8902382"}"#;
        assert_eq!(
            serde_json::from_str::<GdidSymbol>(reordered).unwrap(),
            symbol
        );
    }

    #[test]
    fn json_errors_name_the_field() {
        let missing = serde_json::from_str::<GdidSymbol>(r#"{"gdid":"1:1:1"}"#).unwrap_err();
        assert!(
            missing.to_string().starts_with("missing field `sym`"),
            "{missing}"
        );
        let twice = serde_json::from_str::<GdidSymbol>(r#"{"sym":"a","sym":"b","gdid":"1:1:1"}"#)
            .unwrap_err();
        assert!(
            twice.to_string().starts_with("duplicate field `sym`"),
            "{twice}"
        );
        let bad = serde_json::from_str::<GdidSymbol>(r#"{"gdid":"1:16:1","sym":"x"}"#).unwrap_err();
        assert!(bad.to_string().contains("authority"), "{bad}");
    }

    #[test]
    fn serde_test_tokens_readable_and_compact() {
        use serde_test::{Configure, Token, assert_tokens};
        let symbol = GdidSymbol::new(gdid(1, 1, 123), "ZAVIFA-YOLO");
        assert_tokens(
            &symbol.clone().readable(),
            &[
                Token::Struct {
                    name: "GdidSymbol",
                    len: 2,
                },
                Token::Str("gdid"),
                Token::Str("1:1:123"),
                Token::Str("sym"),
                Token::Str("ZAVIFA-YOLO"),
                Token::StructEnd,
            ],
        );
        assert_tokens(
            &symbol.compact(),
            &[
                Token::Struct {
                    name: "GdidSymbol",
                    len: 2,
                },
                Token::Str("gdid"),
                Token::Bytes(&[0, 0, 0, 1, 0x10, 0, 0, 0, 0, 0, 0, 123]),
                Token::Str("sym"),
                Token::Str("ZAVIFA-YOLO"),
                Token::StructEnd,
            ],
        );
    }
}

// ---------------------------------------------------------------------------------------------
// Properties.
// ---------------------------------------------------------------------------------------------

fn any_gdid() -> impl Strategy<Value = Gdid> {
    (any::<u32>(), any::<u64>()).prop_map(|(era, id64)| Gdid::from_raw(era, id64))
}

proptest! {
    #[test]
    fn every_id_round_trips_with_any_seed(id in any_gdid(), seed in any::<u8>()) {
        let text = id.to_elink(seed);
        prop_assert!(text.len() <= Gdid::ELINK_MAX_LEN);
        prop_assert_eq!(Gdid::from_elink(&text), Ok(id));
        prop_assert_eq!(Gdid::from_elink(&text.to_lowercase().replace('-', " ")), Ok(id));
        prop_assert_eq!(&text, &id.to_elink(seed & 0x0f));
        prop_assert_eq!(GdidSymbol::parse_any(&text).map(|s| s.gdid()), Ok(id));
    }

    #[test]
    fn metadata_round_trips(
        id in any_gdid(),
        seed in any::<u8>(),
        metadata in proptest::collection::vec(any::<u8>(), 0..600),
    ) {
        match ELink::with_metadata(id, metadata.clone()) {
            Ok(link) => {
                let text = link.encode(seed);
                prop_assert_eq!(text.len(), link.encoded_len());
                prop_assert!(text.len() <= ELink::MAX_LEN);
                let read = ELink::decode(&text).unwrap();
                prop_assert_eq!(read.id(), id);
                prop_assert_eq!(read.metadata(), &metadata[..]);
                prop_assert_eq!(Gdid::from_elink(&text), Ok(id));
            }
            Err(ELinkError::MetadataTooLong { length, max }) => {
                prop_assert_eq!(length, metadata.len());
                prop_assert!((495..=507).contains(&max) && length > max);
            }
            Err(e) => prop_assert!(false, "unexpected {e}"),
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,80}") {
        let decoded = ELink::decode(&text);
        let _ = decoded.as_ref().map_err(ToString::to_string);
        prop_assert_eq!(Gdid::from_elink(&text), decoded.clone().map(|l| l.id()));
        if let Ok(link) = decoded {
            prop_assert_eq!(ELink::decode(&link.encode(0)), Ok(link));
        }
        let _ = GdidSymbol::parse_any(&text).map_err(|e| e.to_string());
    }

    #[test]
    fn syllable_soup_never_panics(
        text in "([A-Za-z]{2}|-| ){0,40}",
        metadata_tail in "[A-Z]{0,1200}",
    ) {
        for input in [text.clone(), format!("{text}{metadata_tail}")] {
            let decoded = ELink::decode(&input);
            let _ = decoded.as_ref().map_err(ToString::to_string);
            if let Ok(link) = decoded {
                let again = link.encode(3);
                prop_assert!(again.len() <= ELink::MAX_LEN);
                prop_assert_eq!(ELink::decode(&again), Ok(link));
            }
        }
    }
}
