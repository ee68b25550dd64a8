//! `gdid inspect` end to end: the real binary, its output, its exit status.

mod common;

use common::{gdid, stderr, stdout};

#[test]
fn prints_a_table_of_every_field_and_form() {
    let out = gdid(&["inspect", "1293:3:57"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "era        1293\n\
         authority  3\n\
         counter    57\n\
         text       1293:3:57\n\
         hex        0000050d3000000000000039 (12 bytes)\n\
         leb        8d 0a b9 80 80 80 80 80 80 80 30 (11 bytes)\n\
         compact    8d 0a 93 07 (4 bytes)\n\
         elink      AKCUGO-AQASEW (seed 0)\n"
    );
}

#[test]
fn json_is_exactly_one_object_with_the_documented_fields() {
    let expected = concat!(
        r#"{"era":0,"authority":1,"counter":75,"text":"0:1:75","hex":"00000000100000000000004b","#,
        r#""leb":"00cb8080808080808010","compact":"00b109","#,
        r#""elink":"ACACIG-GP"}"#,
        "\n"
    );
    // The arguments after `inspect`.
    for args in [
        &["--format", "json", "0:1:75"][..],
        &["--format", "json", "0x00000000100000000000004B"],
        &[
            "--from",
            "hex",
            "--format",
            "json",
            "00000000100000000000004b",
        ],
        &[
            "--from",
            "hex",
            "--format",
            "json",
            "0x00000000100000000000004B",
        ],
        &["--from", "leb", "--format", "json", "00cb8080808080808010"],
        &["--from", "compact", "--format", "json", "00b109"],
        &["--from", "elink", "--format", "json", "ACACIG-GP"],
        &["--from", "elink", "--format", "json", "acac ig gp"],
        // Another seed spells the same id: the output is still spelled with seed 0.
        &["--from", "elink", "--format", "json", "CUCKKN-IV"],
        &["--from", "auto", "--format", "json", "ACACIG-GP"],
        &["--from", "auto", "--format", "json", "0:1:75"],
    ] {
        let args = [&["inspect"], args].concat();
        let out = gdid(&args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(stdout(&out), expected, "{args:?}");
        let value: serde_json::Value = serde_json::from_str(stdout(&out)).unwrap();
        assert_eq!(value.as_object().unwrap().len(), 8);
    }
}

#[test]
fn invalid_input_exits_2_with_one_line_naming_input_and_reason() {
    for (args, message) in [
        (
            &["inspect", "1:18:3"][..],
            "gdid: invalid text value \"1:18:3\": the authority segment at byte 2 is out of range: the maximum is 15\n",
        ),
        (
            &["inspect", "--format", "json", "--from", "leb", "05fb00"],
            "gdid: invalid leb value \"05fb00\": the id64 at byte 1 is not in canonical (shortest) LEB128 form\n",
        ),
        (
            &["inspect", "--from", "hex", "0102"],
            "gdid: invalid hex value \"0102\": expected 12 bytes, found 2\n",
        ),
        (
            &["inspect", "--from", "elink", "PYYEOP-XXYOIWUFOBSHAMNE-GOOX"],
            "gdid: invalid elink value \"PYYEOP-XXYOIWUFOBSHAMNE-GOOX\": invalid ELink syllable \"XX\" at byte 7: not in the alphabet\n",
        ),
        (
            // The strict text form does not read ELinks.
            &["inspect", "ACACIG-GP"],
            "gdid: invalid text value \"ACACIG-GP\": expected 24 hex digits (optionally after 0x), found 9\n",
        ),
    ] {
        let out = gdid(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stdout(&out), "", "{args:?}");
        assert_eq!(stderr(&out), message, "{args:?}");
    }
}

#[test]
fn a_bad_flag_is_bad_input_too() {
    for args in [
        &["inspect", "--from", "base64", "x"][..],
        // Gone: `bytes` was `hex`, `--json` is `--format json`.
        &["inspect", "--from", "bytes", "0000050d3000000000000039"],
        &["inspect", "--json", "1293:3:57"],
        &["inspect", "--format", "hex", "1293:3:57"],
    ] {
        let out = gdid(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stdout(&out), "", "{args:?}");
    }
}
