#![cfg(feature = "serde")]
//! serde: readable formats get the colon text, binary formats the 12 bytes; the `with` helpers.

use gdid_core::Gdid;
use serde::{Deserialize, Serialize};
use serde_test::{Configure, Token, assert_de_tokens, assert_de_tokens_error, assert_tokens};

const SAMPLE: Gdid = gdid_core::gdid!("1293:3:57");
const SAMPLE_BYTES: [u8; 12] = SAMPLE.to_bytes();

fn sample() -> Gdid {
    SAMPLE
}

#[test]
fn readable_formats_get_the_colon_text() {
    assert_tokens(&sample().readable(), &[Token::Str("1293:3:57")]);
    // The hex form is accepted too.
    assert_de_tokens(
        &sample().readable(),
        &[Token::Str("0x0000050d3000000000000039")],
    );
}

#[test]
fn binary_formats_get_the_twelve_bytes() {
    assert_tokens(&sample().compact(), &[Token::Bytes(&SAMPLE_BYTES)]);
    let mut seq = vec![Token::Seq { len: Some(12) }];
    seq.extend(SAMPLE_BYTES.iter().map(|b| Token::U8(*b)));
    seq.push(Token::SeqEnd);
    assert_de_tokens(&sample().compact(), &seq);
}

#[test]
fn bad_input_gets_a_precise_error() {
    assert_de_tokens_error::<serde_test::Readable<Gdid>>(
        &[Token::Str("1:18:3")],
        "GDID parsing failed: the authority segment at byte 2 is out of range: the maximum is 15",
    );
    assert_de_tokens_error::<serde_test::Compact<Gdid>>(
        &[Token::Bytes(&[1, 2, 3])],
        "GDID parsing failed: expected 12 bytes, found 3",
    );
    assert_de_tokens_error::<serde_test::Compact<Gdid>>(
        &[
            Token::Seq { len: Some(2) },
            Token::U8(1),
            Token::U8(2),
            Token::SeqEnd,
        ],
        "invalid length 2, expected a GDID as era:authority:counter text, 24 hex digits or 12 bytes",
    );
    assert_de_tokens_error::<serde_test::Readable<Gdid>>(
        &[Token::I64(5)],
        "invalid type: integer `5`, expected a GDID as era:authority:counter text, 24 hex digits or 12 bytes",
    );
}

#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct Forms {
    plain: Gdid,
    #[serde(with = "gdid_core::serde::text")]
    text: Gdid,
    #[serde(with = "gdid_core::serde::hex")]
    hex: Gdid,
    #[serde(with = "gdid_core::serde::bytes")]
    bytes: Gdid,
    #[serde(with = "gdid_core::serde::compact")]
    compact: Gdid,
}

#[test]
fn with_helpers_pick_one_form_whatever_the_format() {
    let id = sample();
    let forms = Forms {
        plain: id,
        text: id,
        hex: id,
        bytes: id,
        compact: id,
    };
    let json = serde_json::to_string(&forms).unwrap();
    assert_eq!(
        json,
        r#"{"plain":"1293:3:57","text":"1293:3:57","hex":"0000050d3000000000000039","bytes":[0,0,5,13,48,0,0,0,0,0,0,57],"compact":[141,10,147,7]}"#
    );
    assert_eq!(serde_json::from_str::<Forms>(&json).unwrap(), forms);
}

proptest::proptest! {
    /// Every helper round-trips any id, the small ones the variable-length forms favour included.
    #[test]
    fn every_helper_round_trips_any_id(
        era in proptest::prop_oneof![0..300u32, proptest::num::u32::ANY],
        authority in 0..=gdid_core::AUTHORITY_MAX,
        counter in proptest::prop_oneof![0..100_000u64, 0..=gdid_core::COUNTER_MAX],
    ) {
        let id = Gdid::from_parts(era, authority, counter).unwrap();
        let forms = Forms { plain: id, text: id, hex: id, bytes: id, compact: id };
        let json = serde_json::to_string(&forms).unwrap();
        proptest::prop_assert_eq!(serde_json::from_str::<Forms>(&json).unwrap(), forms);
    }
}

#[test]
fn compact_helper_rejects_trailing_and_truncated_bytes() {
    #[derive(Deserialize, Debug)]
    struct Only {
        #[serde(with = "gdid_core::serde::compact")]
        #[allow(dead_code)]
        id: Gdid,
    }
    let err = serde_json::from_str::<Only>(r#"{"id":[141,10,147,7,0]}"#).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("GDID parsing failed: 1 bytes after the compact form"),
        "{err}"
    );
    let err = serde_json::from_str::<Only>(r#"{"id":[141,10,147]}"#).unwrap_err();
    assert!(
        err.to_string().starts_with(
            "GDID parsing failed: input ends inside the counter<<4|authority at byte 3"
        ),
        "{err}"
    );
}

/// Every form, for `Option<Gdid>` fields.
#[derive(Serialize, Deserialize, Debug, PartialEq)]
struct OptionalForms {
    plain: Option<Gdid>,
    #[serde(default, with = "gdid_core::serde::text::option")]
    text: Option<Gdid>,
    #[serde(default, with = "gdid_core::serde::hex::option")]
    hex: Option<Gdid>,
    #[serde(default, with = "gdid_core::serde::bytes::option")]
    bytes: Option<Gdid>,
    #[serde(default, with = "gdid_core::serde::compact::option")]
    compact: Option<Gdid>,
    #[serde(with = "gdid_core::serde::zero_as_none")]
    azos: Option<Gdid>,
}

fn all_optional(id: Option<Gdid>) -> OptionalForms {
    OptionalForms {
        plain: id,
        text: id,
        hex: id,
        bytes: id,
        compact: id,
        azos: id,
    }
}

#[test]
fn option_helpers_write_null_for_none_and_the_form_for_some() {
    let none = all_optional(None);
    let json = serde_json::to_string(&none).unwrap();
    assert_eq!(
        json,
        r#"{"plain":null,"text":null,"hex":null,"bytes":null,"compact":null,"azos":"0:0:0"}"#
    );
    assert_eq!(serde_json::from_str::<OptionalForms>(&json).unwrap(), none);
    // Missing fields (with `#[serde(default)]`) and nulls read as None; so does the zero id where
    // the Azos convention is asked for, and only there.
    assert_eq!(
        serde_json::from_str::<OptionalForms>(r#"{"plain":null,"azos":null}"#).unwrap(),
        none
    );

    let some = all_optional(Some(sample()));
    let json = serde_json::to_string(&some).unwrap();
    assert_eq!(
        json,
        r#"{"plain":"1293:3:57","text":"1293:3:57","hex":"0000050d3000000000000039","bytes":[0,0,5,13,48,0,0,0,0,0,0,57],"compact":[141,10,147,7],"azos":"1293:3:57"}"#
    );
    assert_eq!(serde_json::from_str::<OptionalForms>(&json).unwrap(), some);

    let zero = all_optional(Some(Gdid::ZERO));
    let back: OptionalForms = serde_json::from_str(&serde_json::to_string(&zero).unwrap()).unwrap();
    assert_eq!(back, OptionalForms { azos: None, ..zero });
}

#[test]
fn option_helpers_in_binary_formats() {
    // A non-self-describing format: Option's tag, then the 12 bytes.
    assert_tokens(
        &Some(sample()).compact(),
        &[Token::Some, Token::Bytes(&SAMPLE_BYTES)],
    );
    assert_tokens(&None::<Gdid>.compact(), &[Token::None]);

    #[derive(Serialize, Deserialize, Debug, PartialEq)]
    struct Azos {
        #[serde(with = "gdid_core::serde::zero_as_none")]
        id: Option<Gdid>,
    }
    // zero_as_none writes a plain Gdid, no tag: what an Azos reader expects.
    let fields = |bytes: &'static [u8]| {
        [
            Token::Struct {
                name: "Azos",
                len: 1,
            },
            Token::Str("id"),
            Token::Bytes(bytes),
            Token::StructEnd,
        ]
    };
    assert_tokens(&Azos { id: None }.compact(), &fields(&[0; 12]));
    assert_tokens(
        &Azos { id: Some(sample()) }.compact(),
        &fields(&SAMPLE_BYTES),
    );
}

#[test]
fn option_helpers_reject_what_is_not_a_gdid() {
    let err = serde_json::from_str::<OptionalForms>(r#"{"hex":"1:99:1","azos":null}"#).unwrap_err();
    assert!(err.to_string().contains("GDID parsing failed"), "{err}");
    let err = serde_json::from_str::<OptionalForms>(r#"{"azos":5}"#).unwrap_err();
    assert!(
        err.to_string().contains("invalid type: integer `5`"),
        "{err}"
    );
}

#[test]
fn non_zero_is_the_explicit_azos_reading() {
    assert_eq!(Gdid::ZERO.non_zero(), None);
    assert_eq!(sample().non_zero(), Some(sample()));
}

/// Why there is no `NonZeroGdid` (see `Gdid::non_zero`): `Option<Gdid>` has no niche to use.
/// If a future layout gives it one, this test says so and the documentation must change.
#[test]
fn sizes_the_documentation_states() {
    assert_eq!(size_of::<Gdid>(), 12);
    assert_eq!(size_of::<Option<Gdid>>(), 16);
}
