//! [`GdidSymbol`]: an id with the text it was read from (NFX/Azos `GDIDSymbol`).

use alloc::string::{String, ToString};
use core::fmt;

use crate::elink::ELinkError;
use crate::error::ParseError;
use crate::gdid::Gdid;

/// A GDID together with the text it was read from, such as an ELink a user typed.
///
/// Two symbols are equal when both the id and the text are (the text compared exactly, case
/// included): `AUCKIR-ABASVITILT` and `auckir-abasvitilt` are one id but two symbols.
/// `Display` writes `{gdid}::'{symbol}'`; serde (feature `serde`) writes
/// `{"gdid": …, "sym": "…"}`, as Azos's JSON does.
///
/// # Examples
///
/// ```
/// use gdid_core::GdidSymbol;
///
/// # fn main() -> Result<(), gdid_core::ParseAnyError> {
/// let symbol = GdidSymbol::parse_any("  AUCKIR-ABASVITILT ")?;
/// assert_eq!(symbol.to_string(), "1280:2:8902382::'AUCKIR-ABASVITILT'");
/// assert_eq!(symbol.gdid(), GdidSymbol::parse_any("1280:2:8902382")?.gdid());
/// assert_ne!(symbol, GdidSymbol::parse_any("auckir-abasvitilt")?);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct GdidSymbol {
    gdid: Gdid,
    symbol: String,
}

impl GdidSymbol {
    /// A symbol of `gdid` spelled `symbol`; nothing checks that the text spells the id.
    pub fn new(gdid: Gdid, symbol: impl Into<String>) -> GdidSymbol {
        GdidSymbol {
            gdid,
            symbol: symbol.into(),
        }
    }

    /// Reads an id in any text form Azos's `AsGDIDSymbol` reads, keeping the trimmed input as
    /// the symbol: the colon form, the hex form (24 digits, optional `0x`) or an ELink (its
    /// metadata, if any, is checked and dropped).
    ///
    /// This reader is lenient on purpose, for text typed by people; `str::parse::<Gdid>` stays
    /// strict and does not read ELinks. The colon and hex forms are tried first, as in Azos.
    ///
    /// # Errors
    ///
    /// [`ParseAnyError::Empty`] for blank input. Otherwise the error of the form the input looks
    /// like: [`ParseAnyError::Text`] when it holds a `:` or a decimal digit (an ELink has
    /// neither), [`ParseAnyError::ELink`] otherwise.
    ///
    /// ```
    /// use gdid_core::{Gdid, GdidSymbol, ParseAnyError};
    ///
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// let id: Gdid = "1:1:123".parse()?;
    /// for text in ["1:1:123", " 0x00000001100000000000007B", "ZAVIFA-YOLO", "za vi fa yo lo"] {
    ///     assert_eq!(GdidSymbol::parse_any(text)?.gdid(), id);
    /// }
    /// assert_eq!(GdidSymbol::parse_any(" ZAVIFA-YOLO\n")?.symbol(), "ZAVIFA-YOLO");
    /// assert!(matches!(GdidSymbol::parse_any("1:16:0"), Err(ParseAnyError::Text(_))));
    /// assert!(matches!(GdidSymbol::parse_any("ZAVIFA-YOLA"), Err(ParseAnyError::ELink(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub fn parse_any(text: &str) -> Result<GdidSymbol, ParseAnyError> {
        let gdid = Gdid::parse_any(text)?;
        Ok(GdidSymbol::new(gdid, text.trim()))
    }

    /// The id.
    pub const fn gdid(&self) -> Gdid {
        self.gdid
    }

    /// The text the id was read from.
    pub fn symbol(&self) -> &str {
        &self.symbol
    }

    /// The id and its text.
    pub fn into_parts(self) -> (Gdid, String) {
        (self.gdid, self.symbol)
    }

    /// `true` when the id is [`Gdid::ZERO`], whatever the text.
    pub const fn is_zero(&self) -> bool {
        self.gdid.is_zero()
    }
}

impl Gdid {
    /// Reads an id in any text form: colon, hex or ELink; the id of
    /// [`GdidSymbol::parse_any`], without keeping the text. Never allocates.
    ///
    /// `str::parse::<Gdid>` stays strict: it reads the colon and hex forms only.
    ///
    /// # Errors
    ///
    /// As [`GdidSymbol::parse_any`].
    ///
    /// ```
    /// use gdid_core::Gdid;
    ///
    /// # fn main() -> Result<(), gdid_core::ParseAnyError> {
    /// assert_eq!(Gdid::parse_any("AUCKIR-ABASVITILT")?, Gdid::parse_any("1280:2:8902382")?);
    /// assert!("AUCKIR-ABASVITILT".parse::<Gdid>().is_err());
    /// # Ok(())
    /// # }
    /// ```
    pub fn parse_any(text: &str) -> Result<Gdid, ParseAnyError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(ParseAnyError::Empty);
        }
        match Gdid::try_parse(text) {
            Ok(gdid) => Ok(gdid),
            Err(e) if text.bytes().any(|b| b == b':' || b.is_ascii_digit()) => {
                Err(ParseAnyError::Text(e))
            }
            Err(_) => Gdid::from_elink(text).map_err(ParseAnyError::ELink),
        }
    }
}

impl From<Gdid> for GdidSymbol {
    /// The id with its colon form as the symbol, as Azos does for a GDID.
    fn from(gdid: Gdid) -> Self {
        GdidSymbol::new(gdid, gdid.to_string())
    }
}

impl fmt::Display for GdidSymbol {
    /// `{gdid}::'{symbol}'`, e.g. `1280:2:8902382::'AUCKIR-ABASVITILT'`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}::'{}'", self.gdid, self.symbol)
    }
}

/// Text that [`GdidSymbol::parse_any`] cannot read in any form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParseAnyError {
    /// The input is empty or only whitespace.
    #[error("empty input: expected era:authority:counter, 24 hex digits or an ELink")]
    Empty,
    /// The input looks like the colon or hex form (it holds a `:` or a digit) and is not valid.
    #[error(transparent)]
    Text(ParseError),
    /// The input has no `:` and no digit, and is not a valid ELink.
    #[error(transparent)]
    ELink(ELinkError),
}

#[cfg(feature = "serde")]
mod serde_impl {
    //! `{"gdid": …, "sym": "…"}`: the id in its own serde form (colon text in readable
    //! formats), the symbol as a string.

    use alloc::string::String;
    use core::fmt;

    use serde::de::{self, MapAccess, SeqAccess, Visitor};
    use serde::ser::SerializeStruct;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    use super::GdidSymbol;
    use crate::gdid::Gdid;

    const FIELDS: &[&str] = &["gdid", "sym"];

    impl Serialize for GdidSymbol {
        fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
            let mut map = serializer.serialize_struct("GdidSymbol", 2)?;
            map.serialize_field("gdid", &self.gdid)?;
            map.serialize_field("sym", &self.symbol)?;
            map.end()
        }
    }

    impl<'de> Deserialize<'de> for GdidSymbol {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_struct("GdidSymbol", FIELDS, SymbolVisitor)
        }
    }

    enum Key {
        Gdid,
        Sym,
        Other,
    }

    impl<'de> Deserialize<'de> for Key {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct KeyVisitor;
            impl Visitor<'_> for KeyVisitor {
                type Value = Key;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("`gdid` or `sym`")
                }
                fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                    Ok(match key {
                        "gdid" => Key::Gdid,
                        "sym" => Key::Sym,
                        _ => Key::Other,
                    })
                }
                fn visit_u64<E: de::Error>(self, index: u64) -> Result<Key, E> {
                    Ok(match index {
                        0 => Key::Gdid,
                        1 => Key::Sym,
                        _ => Key::Other,
                    })
                }
            }
            deserializer.deserialize_identifier(KeyVisitor)
        }
    }

    struct SymbolVisitor;

    impl<'de> Visitor<'de> for SymbolVisitor {
        type Value = GdidSymbol;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a GDID symbol: a map with `gdid` and `sym`")
        }

        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<GdidSymbol, A::Error> {
            let gdid: Gdid = seq
                .next_element()?
                .ok_or_else(|| de::Error::invalid_length(0, &self))?;
            let symbol: String = seq
                .next_element()?
                .ok_or_else(|| de::Error::invalid_length(1, &self))?;
            Ok(GdidSymbol { gdid, symbol })
        }

        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<GdidSymbol, A::Error> {
            let (mut gdid, mut symbol) = (None, None);
            while let Some(key) = map.next_key()? {
                match key {
                    Key::Gdid if gdid.is_some() => return Err(de::Error::duplicate_field("gdid")),
                    Key::Gdid => gdid = Some(map.next_value::<Gdid>()?),
                    Key::Sym if symbol.is_some() => return Err(de::Error::duplicate_field("sym")),
                    Key::Sym => symbol = Some(map.next_value::<String>()?),
                    Key::Other => {
                        map.next_value::<de::IgnoredAny>()?;
                    }
                }
            }
            Ok(GdidSymbol {
                gdid: gdid.ok_or_else(|| de::Error::missing_field("gdid"))?,
                symbol: symbol.ok_or_else(|| de::Error::missing_field("sym"))?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_is_of_the_id_and_the_exact_text() {
        let id = Gdid::from_parts(1280, 2, 8_902_382).unwrap();
        let upper = GdidSymbol::new(id, "AUCKIR-ABASVITILT");
        assert_eq!(upper, GdidSymbol::new(id, "AUCKIR-ABASVITILT"));
        assert_ne!(upper, GdidSymbol::new(id, "auckir-abasvitilt"));
        assert_ne!(upper, GdidSymbol::new(Gdid::ZERO, "AUCKIR-ABASVITILT"));
    }

    #[test]
    fn a_gdid_becomes_a_symbol_of_its_colon_form() {
        let id = Gdid::from_parts(7, 12, 0).unwrap();
        assert_eq!(GdidSymbol::from(id).to_string(), "7:12:0::'7:12:0'");
        assert!(GdidSymbol::default().is_zero());
    }

    #[test]
    fn blank_input_is_empty() {
        for text in ["", "   ", "\t\n"] {
            assert_eq!(GdidSymbol::parse_any(text), Err(ParseAnyError::Empty));
        }
    }
}
