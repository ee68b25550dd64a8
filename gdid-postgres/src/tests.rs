//! `cargo pgrx test`: the type, its forms and its operators, in a test instance of pgrx's own.

use pgrx::prelude::*;
use rand::rngs::StdRng;
use rand::{RngCore, SeedableRng};

use crate::Gdid;

fn one<T: pgrx::datum::FromDatum + pgrx::datum::IntoDatum>(query: &str) -> T {
    Spi::get_one::<T>(query)
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .unwrap_or_else(|| panic!("{query}: NULL"))
}

#[pg_schema]
mod tests {
    use super::*;

    #[pg_test]
    fn the_type_is_12_bytes_fixed_plain_and_by_reference() {
        assert_eq!(
            one::<i16>("SELECT typlen FROM pg_type WHERE typname = 'gdid'"),
            12
        );
        assert_eq!(
            one::<String>("SELECT typstorage::text FROM pg_type WHERE typname = 'gdid'"),
            "p"
        );
        assert!(!one::<bool>(
            "SELECT typbyval FROM pg_type WHERE typname = 'gdid'"
        ));
        assert_eq!(one::<i32>("SELECT pg_column_size('1293:3:57'::gdid)"), 12);
    }

    #[pg_test]
    fn text_in_any_form_and_out_in_colon_form() {
        for input in [
            "1293:3:57",
            "0000050d3000000000000039",
            "0x0000050D3000000000000039",
        ] {
            assert_eq!(
                one::<String>(&format!("SELECT '{input}'::gdid::text")),
                "1293:3:57"
            );
        }
        let elink = one::<String>("SELECT gdid_elink('1293:3:57')");
        assert_eq!(
            one::<String>(&format!("SELECT '{elink}'::gdid::text")),
            "1293:3:57"
        );
        let largest = "4294967295:15:1152921504606846975";
        assert_eq!(
            one::<String>(&format!("SELECT '{largest}'::text::gdid::text")),
            largest
        );
        assert_eq!(
            one::<String>("SELECT 'ffffffffffffffffffffffff'::gdid::text"),
            largest
        );
    }

    #[pg_test(
        error = "invalid input syntax for type gdid: \"0:16:1\": the authority segment at byte 2 is out of range: the maximum is 15"
    )]
    fn an_authority_above_15_is_refused_with_its_reason() {
        one::<Gdid>("SELECT '0:16:1'::gdid");
    }

    #[pg_test(error = "a bytea of 11 bytes is not a gdid: a gdid is 12 bytes")]
    fn a_bytea_of_another_length_is_refused() {
        one::<Gdid>("SELECT '\\x0000000010000000000000'::bytea::gdid");
    }

    #[pg_test(error = "\"base64\": no such form: expected text, hex, leb, compact or elink")]
    fn a_form_of_no_name_is_refused() {
        one::<String>("SELECT gdid_to_form('1:1:1', 'base64')");
    }

    #[pg_test(
        error = "invalid compact value \"zz\": expected hex digits: Invalid character 'z' at position 0"
    )]
    fn a_value_not_in_its_form_is_refused() {
        one::<Gdid>("SELECT gdid_from_form('zz', 'compact')");
    }

    #[pg_test]
    fn parts_and_forms() {
        assert_eq!(one::<i64>("SELECT gdid_era('1293:3:57')"), 1293);
        assert_eq!(one::<i32>("SELECT gdid_authority('1293:3:57')"), 3);
        assert_eq!(one::<i64>("SELECT gdid_counter('1293:3:57')"), 57);
        assert_eq!(
            one::<String>("SELECT gdid_hex('1293:3:57')"),
            "0000050d3000000000000039"
        );
        assert_eq!(
            one::<String>("SELECT gdid_elink('1293:3:57')"),
            gdid::Form::Elink.write(gdid::Gdid::from_parts(1293, 3, 57).unwrap())
        );
        // Every form by its name, as the command and the server write and read it.
        let id = gdid::Gdid::from_parts(1293, 3, 57).unwrap();
        for form in gdid::Form::ALL {
            let written = one::<String>(&format!("SELECT gdid_to_form('1293:3:57', '{form}')"));
            assert_eq!(written, form.write(id), "{form}");
            let read = one::<String>(&format!(
                "SELECT gdid_from_form('{written}', '{}')::text",
                form.name().to_uppercase()
            ));
            assert_eq!(read, "1293:3:57", "{form}");
        }
        assert_eq!(
            one::<Vec<u8>>("SELECT '1293:3:57'::gdid::bytea"),
            gdid::Gdid::from_parts(1293, 3, 57).unwrap().to_bytes()
        );
        assert_eq!(
            one::<String>("SELECT '\\x0000050d3000000000000039'::bytea::gdid::text"),
            "1293:3:57"
        );
    }

    /// Random ids, as text into the type and out again, sorted by the type, by their bytes and by
    /// `Ord` in Rust: the same id and the same order all ways.
    #[pg_test]
    fn random_ids_round_trip_and_sort_alike_in_sql_bytes_and_rust() {
        // Reproducible, and varied in every byte.
        let mut rng = StdRng::seed_from_u64(0x9e37_79b9_7f4a_7c15);
        let mut next = || rng.next_u64();
        let mut ids: Vec<gdid::Gdid> = (0..2_000)
            .map(|i| {
                // Small eras and counters as often as large ones: equal eras test the rest.
                let era = next() >> 32;
                let era = if i % 2 == 0 { era % 4 } else { era };
                let id64 = next(); // the authority in the top 4 bits, the counter below
                let id64 = if i % 3 == 0 {
                    id64 & !0x0fff_ffff_ffff_fff8
                } else {
                    id64
                };
                gdid::Gdid::from_raw(u32::try_from(era).unwrap(), id64)
            })
            .collect();
        Spi::run("CREATE TEMP TABLE ids (id gdid, ord serial)").unwrap();
        let values: Vec<String> = ids.iter().map(|id| format!("('{id}')")).collect();
        Spi::run(&format!("INSERT INTO ids (id) VALUES {}", values.join(","))).unwrap();
        let texts = |order: &str| -> Vec<String> {
            Spi::connect(|client| {
                client
                    .select(
                        &format!("SELECT ids.id::text FROM ids ORDER BY {order}"),
                        None,
                        &[],
                    )
                    .unwrap()
                    .map(|row| row.get::<String>(1).unwrap().unwrap())
                    .collect()
            })
        };
        // `ids.id`: the column, not the text the query outputs under the same name.
        let inserted = texts("ord");
        let by_type = texts("ids.id, ord");
        let by_bytes = texts("ids.id::bytea, ord");
        ids.iter()
            .zip(&inserted)
            .for_each(|(id, text)| assert_eq!(&id.to_string(), text));
        ids.sort();
        let by_rust: Vec<String> = ids.iter().map(ToString::to_string).collect();
        assert_eq!(by_type, by_rust);
        assert_eq!(by_bytes, by_rust);
        // The btree order agrees too: the same rows come back through an index.
        Spi::run("CREATE INDEX ON ids (id); SET LOCAL enable_seqscan = off").unwrap();
        assert_eq!(texts("ids.id"), by_rust);
    }

    #[pg_test]
    fn operators_and_hash_agree_with_equality() {
        assert!(one::<bool>(
            "SELECT '0:1:7'::gdid = '000000001000000000000007'"
        ));
        assert!(one::<bool>(
            "SELECT '0:1:7'::gdid < '0:1:8' AND '0:2:0'::gdid > '0:1:8'"
        ));
        assert!(one::<bool>(
            "SELECT '1:0:0'::gdid > '0:15:1152921504606846975'"
        ));
        assert!(one::<bool>("SELECT '0:1:7'::gdid <> '0:1:8'"));
        assert!(one::<bool>(
            "SELECT gdid_hash('0:1:7') = gdid_hash('000000001000000000000007'::gdid)"
        ));
        // The hash is PostgreSQL's own hash of the 12 bytes (stable, as hash indexes on disk
        // need): that of a text of the same bytes, "ABCDEFGHIJKL".
        assert!(one::<bool>(
            "SELECT gdid_hash('4142434445464748494a4b4c') = hashtext('ABCDEFGHIJKL') \
             AND gdid_hash_extended('4142434445464748494a4b4c', 7) \
               = hashtextextended('ABCDEFGHIJKL', 7)"
        ));
        Spi::run(
            "CREATE TEMP TABLE h (id gdid); CREATE INDEX ON h USING hash (id); \
             INSERT INTO h SELECT ('0:1:' || n)::gdid FROM generate_series(1, 1000) AS n",
        )
        .unwrap();
        Spi::run("SET LOCAL enable_seqscan = off").unwrap();
        assert_eq!(one::<i64>("SELECT count(*) FROM h WHERE id = '0:1:500'"), 1);
    }

    /// A `BYTEA` column of GDIDs migrates in place, its index with it.
    #[pg_test]
    fn a_bytea_column_migrates_with_using() {
        Spi::run(
            "CREATE TEMP TABLE old (id bytea PRIMARY KEY); \
             INSERT INTO old VALUES ('\\x000000001000000000000007'), ('\\x000000001000000000000009'); \
             ALTER TABLE old ALTER COLUMN id TYPE gdid USING id::gdid",
        )
        .unwrap();
        assert_eq!(one::<String>("SELECT max(id)::text FROM old"), "0:1:9");
        assert_eq!(one::<String>("SELECT min(id)::text FROM old"), "0:1:7");
        assert_eq!(
            one::<String>(
                "SELECT format_type(atttypid, NULL) FROM pg_attribute WHERE attrelid = 'old'::regclass AND attname = 'id'"
            ),
            "gdid"
        );
    }
}
