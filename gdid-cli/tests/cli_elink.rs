//! `gdid convert` with ELinks end to end: `--to elink` (seed 0), `--from elink`, `--from auto`.

mod common;

use common::{gdid_with_stdin, stderr, stdout};

/// What `gdid` printed, converting `stdin` as `args` say; the run must succeed.
fn converted(args: &[&str], stdin: &str) -> String {
    let out = gdid_with_stdin(args, stdin);
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).to_owned()
}

#[test]
fn to_elink_spells_with_seed_0_and_matches_azos() {
    let elinks = converted(
        &[
            "convert",
            "--to",
            "elink",
            "1280:2:8902382",
            "0:15:1152921504606846975",
        ],
        "",
    );
    // Upstream: AUCKIR-ABASVITILT is 1280:2:8902382 spelled with seed 0.
    assert_eq!(elinks, "AUCKIR-ABASVITILT\nAXAZGA-XAXAXAXA-XAXAXAXA\n");
}

#[test]
fn from_elink_reads_the_upstream_strings_in_any_case_and_spacing() {
    let texts = converted(
        &["convert", "--from", "elink", "--to", "text"],
        "TUSHEK-TRTV\nCDHOAL-OKHIRAGNAFIPOMEP-UBBR\nai a i i w iw\nZAVIFA-YOLO\n\
         CHAGVU-ANHTUGIFNU-TVWETOUF-JOJKJU\n",
    );
    assert_eq!(
        texts,
        "7:12:0\n1490109883:12:9831762982682\n0:0:123\n1:1:123\n27:15:200100999666333000\n"
    );
}

#[test]
fn from_auto_reads_every_text_form() {
    let texts = converted(
        &["convert", "--from", "auto", "--to", "text"],
        "1280:2:8902382\n0x00000500200000000087d6ee\nAUCKIR-ABASVITILT\n  auckir abasvitilt  \n",
    );
    assert_eq!(texts, "1280:2:8902382\n".repeat(4));
}

#[test]
fn bad_elinks_are_reported_with_their_line_and_the_rest_converted() {
    let out = gdid_with_stdin(
        &["convert", "--from", "auto", "--to", "hex"],
        "TUSHEK-TOTV\nTUSHEK-TRTV\nPYYEOP-ABYOIWUFOBSHAMNE-GO\n1:16:0\n",
    );
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(stdout(&out), "00000007c000000000000000\n");
    assert_eq!(
        stderr(&out),
        "gdid: line 1: invalid auto value \"TUSHEK-TOTV\": ELink checksum mismatch: the link says 242, its content sums to 136\n\
         gdid: line 3: invalid auto value \"PYYEOP-ABYOIWUFOBSHAMNE-GO\": the ELink is too short: expected at least 13 syllables, found 12\n\
         gdid: line 4: invalid auto value \"1:16:0\": the authority segment at byte 2 is out of range: the maximum is 15\n\
         gdid: 3 value(s) could not be converted\n"
    );
}

#[test]
fn the_text_form_stays_strict() {
    let out = gdid_with_stdin(&["convert", "--to", "hex", "AUCKIR-ABASVITILT"], "");
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("gdid: line 1: invalid text value \"AUCKIR-ABASVITILT\""),
        "{}",
        stderr(&out)
    );
}
