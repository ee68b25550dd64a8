//! PostgreSQL's `synchronous_standby_names`, read as the server reads it: `FIRST n (names)`,
//! `ANY n (names)`, `n (names)` (as `FIRST`), or a plain list of names (`FIRST 1`). A name is an
//! identifier, a number, `*` (any standby) or a double-quoted string (`""` for a quote); the
//! keywords are case-insensitive (the server matches names to standbys' `application_name`
//! case-insensitively too, and says which it chose in `pg_stat_replication.sync_state`).

use std::fmt;

/// How the standbys a commit waits for are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    /// `FIRST n`: the first `n` streaming standbys in the list's order (`sync`); the others
    /// listed wait their turn (`potential`).
    First,
    /// `ANY n`: any `n` of the listed standbys (`quorum`).
    Any,
}

/// A parsed `synchronous_standby_names`: each commit waits until `count` of `names` have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct SyncStandbys {
    /// How they are chosen.
    pub(super) method: Method,
    /// How many must have a commit before it is acknowledged (at least 1).
    pub(super) count: usize,
    /// The names as listed, unquoted; `*` is any standby.
    pub(super) names: Vec<String>,
}

impl SyncStandbys {
    /// Whether it can never be satisfied: it waits for more standbys than it names (none
    /// `*`), so no commit is ever acknowledged.
    pub(super) fn waits_for_more_than_named(&self) -> bool {
        self.count > self.names.len() && !self.names.iter().any(|name| name == "*")
    }
}

/// As a reader would write it: `ANY 1 (s1, s2)`, `FIRST 2 (*)`.
impl fmt::Display for SyncStandbys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let method = match self.method {
            Method::First => "FIRST",
            Method::Any => "ANY",
        };
        write!(f, "{method} {} ({})", self.count, self.names.join(", "))
    }
}

/// Why a value could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum BadStandbyNames {
    /// A double quote that is never closed.
    UnclosedQuote,
    /// Something else than what the grammar allows at a place: what was expected, and what
    /// was found (`the end` when nothing was).
    Expected {
        /// What the grammar allows there.
        expected: &'static str,
        /// What the value has there.
        found: String,
    },
    /// `FIRST 0`, `ANY 0`, or a number too large.
    BadCount(String),
}

impl fmt::Display for BadStandbyNames {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadStandbyNames::UnclosedQuote => f.write_str("a double quote is never closed"),
            BadStandbyNames::Expected { expected, found } => {
                write!(f, "expected {expected}, found {found}")
            }
            BadStandbyNames::BadCount(count) => {
                write!(f, "{count} is not a number of standbys (1 or more)")
            }
        }
    }
}

impl std::error::Error for BadStandbyNames {}

/// A piece of the value.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// A name, a number or a keyword; `quoted` when it was in double quotes (then never a
    /// keyword or a number).
    Word {
        text: String,
        quoted: bool,
    },
    Open,
    Close,
    Comma,
}

impl Token {
    /// How an error names it.
    fn described(&self) -> String {
        match self {
            Token::Word { text, .. } => format!("'{text}'"),
            Token::Open => "'('".to_owned(),
            Token::Close => "')'".to_owned(),
            Token::Comma => "','".to_owned(),
        }
    }

    /// The keyword it is (`FIRST`, `ANY`), in upper case, when unquoted.
    fn keyword(&self) -> Option<Method> {
        match self {
            Token::Word {
                text,
                quoted: false,
            } if text.eq_ignore_ascii_case("FIRST") => Some(Method::First),
            Token::Word {
                text,
                quoted: false,
            } if text.eq_ignore_ascii_case("ANY") => Some(Method::Any),
            _ => None,
        }
    }

    /// The number it is, unquoted digits (`Err` when they do not fit).
    fn number(&self) -> Option<Result<usize, BadStandbyNames>> {
        match self {
            Token::Word {
                text,
                quoted: false,
            } if text.bytes().all(|b| b.is_ascii_digit()) => Some(
                text.parse()
                    .ok()
                    .filter(|&n| n > 0)
                    .ok_or_else(|| BadStandbyNames::BadCount(text.clone())),
            ),
            _ => None,
        }
    }
}

/// Reads `value`: `Ok(None)` when it names no standby (empty, or only spaces).
///
/// # Errors
///
/// When it is not in the server's grammar.
pub(super) fn parse(value: &str) -> Result<Option<SyncStandbys>, BadStandbyNames> {
    let tokens = tokenize(value)?;
    if tokens.is_empty() {
        return Ok(None);
    }
    let (method, count, rest) = match tokens.as_slice() {
        [keyword, number, Token::Open, rest @ ..] if keyword.keyword().is_some() => {
            let count = number.number().ok_or_else(|| BadStandbyNames::Expected {
                expected: "a number of standbys after the keyword",
                found: number.described(),
            })??;
            (keyword.keyword().unwrap_or(Method::First), count, rest)
        }
        [number, Token::Open, rest @ ..] if number.number().is_some() => {
            (Method::First, number.number().unwrap_or(Ok(1))?, rest)
        }
        [keyword, ..] if keyword.keyword().is_some() => {
            return Err(BadStandbyNames::Expected {
                expected: "a number and '(' after the keyword (quote a standby named so)",
                found: tokens.get(1).map_or("the end".to_owned(), Token::described),
            });
        }
        _ => return Ok(Some(first_one(names(&tokens, false)?))),
    };
    Ok(Some(SyncStandbys {
        method,
        count,
        names: names(rest, true)?,
    }))
}

/// A plain list: the first listed standby that streams.
fn first_one(names: Vec<String>) -> SyncStandbys {
    SyncStandbys {
        method: Method::First,
        count: 1,
        names,
    }
}

/// `name, name, …`, then `)` when `closed`, then the end.
fn names(tokens: &[Token], closed: bool) -> Result<Vec<String>, BadStandbyNames> {
    let mut names = Vec::new();
    let mut rest = tokens;
    loop {
        match rest {
            [Token::Word { text, .. }, after @ ..] => {
                names.push(text.clone());
                rest = after;
            }
            _ => return Err(expected("a standby's name", rest)),
        }
        match rest {
            [Token::Comma, after @ ..] => rest = after,
            [Token::Close] if closed => return Ok(names),
            [Token::Close, after @ ..] if closed => return Err(expected("the end", after)),
            [] if !closed => return Ok(names),
            _ if closed => return Err(expected("',' or ')'", rest)),
            _ => return Err(expected("',' or the end", rest)),
        }
    }
}

/// The error of finding the start of `rest` where `what` was expected.
fn expected(what: &'static str, rest: &[Token]) -> BadStandbyNames {
    BadStandbyNames::Expected {
        expected: what,
        found: rest.first().map_or("the end".to_owned(), Token::described),
    }
}

/// Splits `value` into words, parentheses and commas, skipping white space.
fn tokenize(value: &str) -> Result<Vec<Token>, BadStandbyNames> {
    let mut tokens = Vec::new();
    let mut chars = value.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            '(' | ')' | ',' => {
                chars.next();
                tokens.push(match c {
                    '(' => Token::Open,
                    ')' => Token::Close,
                    _ => Token::Comma,
                });
            }
            '"' => {
                chars.next();
                tokens.push(quoted(&mut chars)?);
            }
            _ => tokens.push(unquoted(&mut chars)),
        }
    }
    Ok(tokens)
}

/// The rest of a double-quoted name, its opening quote read.
fn quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Result<Token, BadStandbyNames> {
    let mut text = String::new();
    loop {
        match chars.next() {
            None => return Err(BadStandbyNames::UnclosedQuote),
            Some('"') if chars.peek() == Some(&'"') => {
                chars.next();
                text.push('"');
            }
            Some('"') => return Ok(Token::Word { text, quoted: true }),
            Some(c) => text.push(c),
        }
    }
}

/// An unquoted word: up to white space, a parenthesis, a comma or a quote.
fn unquoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>) -> Token {
    let mut text = String::new();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() || matches!(c, '(' | ')' | ',' | '"') {
            break;
        }
        text.push(c);
        chars.next();
    }
    Token::Word {
        text,
        quoted: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(value: &str) -> SyncStandbys {
        parse(value)
            .unwrap_or_else(|e| panic!("{value}: {e}"))
            .unwrap_or_else(|| panic!("{value}: no standbys"))
    }

    #[test]
    fn every_form_of_the_grammar_is_read() {
        for (value, shown) in [
            ("*", "FIRST 1 (*)"),
            ("s1", "FIRST 1 (s1)"),
            ("s1,s2", "FIRST 1 (s1, s2)"),
            ("  s1 ,  s2  ", "FIRST 1 (s1, s2)"),
            ("2 (s1, s2, s3)", "FIRST 2 (s1, s2, s3)"),
            ("FIRST 2 (s1, s2)", "FIRST 2 (s1, s2)"),
            ("first 1(s1)", "FIRST 1 (s1)"),
            ("ANY 1 (s1)", "ANY 1 (s1)"),
            ("any 2 ( * )", "ANY 2 (*)"),
            (
                "Any 1 (\"Standby One\", \"ANY\")",
                "ANY 1 (Standby One, ANY)",
            ),
            ("\"say \"\"hi\"\"\"", "FIRST 1 (say \"hi\")"),
            ("ANY 1 (1, 2)", "ANY 1 (1, 2)"),
            ("\"first\", s2", "FIRST 1 (first, s2)"),
        ] {
            assert_eq!(parsed(value).to_string(), shown, "{value}");
        }
        for empty in ["", "   ", "\t"] {
            assert_eq!(parse(empty), Ok(None), "{empty:?}");
        }
    }

    #[test]
    fn waiting_for_more_standbys_than_named_is_seen() {
        assert!(parsed("FIRST 3 (s1, s2)").waits_for_more_than_named());
        assert!(!parsed("ANY 3 (*)").waits_for_more_than_named());
        assert!(!parsed("ANY 2 (s1, s2)").waits_for_more_than_named());
    }

    #[test]
    fn values_out_of_the_grammar_are_errors_never_panics() {
        for (value, error) in [
            ("\"s1", "a double quote is never closed"),
            (
                "ANY (s1)",
                "expected a number and '(' after the keyword (quote a standby named so), found \
                 '('",
            ),
            (
                "ANY x (s1)",
                "expected a number of standbys after the keyword, found 'x'",
            ),
            ("ANY 0 (s1)", "0 is not a number of standbys (1 or more)"),
            (
                "FIRST 99999999999999999999999 (s1)",
                "99999999999999999999999 is not a number of standbys (1 or more)",
            ),
            ("ANY 1 (s1", "expected ',' or ')', found the end"),
            ("ANY 1 (s1) s2", "expected the end, found 's2'"),
            ("ANY 1 ()", "expected a standby's name, found ')'"),
            ("s1,", "expected a standby's name, found the end"),
            ("s1 s2", "expected ',' or the end, found 's2'"),
            (
                "any",
                "expected a number and '(' after the keyword (quote a standby named so), found \
                 the end",
            ),
            ("(s1)", "expected a standby's name, found '('"),
            (",", "expected a standby's name, found ','"),
        ] {
            assert_eq!(
                parse(value).map(|_| ()).unwrap_err().to_string(),
                error,
                "{value}"
            );
        }
    }
}
