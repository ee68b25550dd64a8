//! `gdid inspect`: every field and every form of one id.

use std::io::{self, Write};

use gdid::{Form, Gdid};
use serde::Serialize;

/// Every field and form of an id, in the order `--format json` prints them.
#[derive(Debug, Serialize)]
pub(crate) struct Inspection {
    era: u32,
    authority: u8,
    counter: u64,
    text: String,
    hex: String,
    leb: String,
    compact: String,
    /// Spelled with [`Form::ELINK_SEED`]: the same id always shows the same link.
    elink: String,
}

impl Inspection {
    /// Computes every form of `id`.
    pub(crate) fn of(id: Gdid) -> Self {
        Inspection {
            era: id.era(),
            authority: id.authority(),
            counter: id.counter(),
            text: Form::Text.write(id),
            hex: Form::Hex.write(id),
            leb: Form::Leb.write(id),
            compact: Form::Compact.write(id),
            elink: Form::Elink.write(id),
        }
    }

    /// Writes one JSON object on one line.
    pub(crate) fn write_json(&self, out: &mut impl Write) -> io::Result<()> {
        serde_json::to_writer(&mut *out, self)?;
        writeln!(out)
    }

    /// Writes a readable table of the fields and forms.
    pub(crate) fn write_table(&self, out: &mut impl Write) -> io::Result<()> {
        let spaced = |hex: &str| {
            hex.as_bytes()
                .chunks(2)
                .map(|pair| String::from_utf8_lossy(pair).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        };
        let n = |hex: &str| hex.len() / 2;
        writeln!(out, "era        {}", self.era)?;
        writeln!(out, "authority  {}", self.authority)?;
        writeln!(out, "counter    {}", self.counter)?;
        writeln!(out, "text       {}", self.text)?;
        writeln!(out, "hex        {} ({} bytes)", self.hex, n(&self.hex))?;
        for (name, hex) in [("leb", &self.leb), ("compact", &self.compact)] {
            writeln!(out, "{name:<10} {} ({} bytes)", spaced(hex), n(hex))?;
        }
        writeln!(out, "elink      {} (seed {})", self.elink, Form::ELINK_SEED)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_has_exactly_the_documented_fields_in_order() {
        let mut out = Vec::new();
        Inspection::of("1293:3:57".parse().unwrap())
            .write_json(&mut out)
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            concat!(
                r#"{"era":1293,"authority":3,"counter":57,"text":"1293:3:57","#,
                r#""hex":"0000050d3000000000000039","#,
                r#""leb":"8d0ab98080808080808030","compact":"8d0a9307","elink":"AKCUGO-AQASEW"}"#,
                "\n"
            )
        );
    }
}
