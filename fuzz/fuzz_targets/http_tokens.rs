//! The server's tokens file: `gdid_http::server::Tokens::parse` on arbitrary UTF-8 (other bytes
//! are skipped: the server reads the file as a `String`).
//!
//! - never panics, and formatting the error never panics;
//! - the error never holds a token (`TokensError`: "It never holds a token"): no token field of
//!   16 bytes or more (`MIN_TOKEN_LEN`, clear or `sha256:`) of the lines read shows in its
//!   `Display`, unless the same text shows when every token field is replaced (it is then a scope
//!   the message names, or the message's own words); and replacing every token field by another
//!   of the same kind and length, one for one, gives the very same error: the message depends on
//!   a token's length and kind only (clear, `sha256:` digest, or refused for how it is written:
//!   64 bare hex digits, `SHA256:` in another case, a leading byte-order mark), never on its
//!   other characters;
//! - the error names a line that lists something (or line 0 for a file that lists nothing, and
//!   only then);
//! - a parsed file lists one token per line, each allowed its listed scopes (`*`: every scope)
//!   and no other, and to give ids back in those written `SCOPE:give-back` only (a permission
//!   after the name, as `:metrics` is); a token not listed, or the text of a `sha256:` field given
//!   as a token, is allowed nothing.
#![no_main]

use std::collections::HashMap;

use gdid_engine::{NameKind, backend::validate_name};
use gdid_http::server::{MIN_TOKEN_LEN, Scopes, Tokens, hashed_line};
use libfuzzer_sys::fuzz_target;

/// One line that lists something: `token` and `scopes` are its first two fields (the parser's
/// split: before `#`, trimmed, split at whitespace), `fields` how many it has.
struct Listed<'a> {
    number: usize,
    token: &'a str,
    scopes: Option<&'a str>,
    fields: usize,
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let listed = listed(text);
    let parsed = Tokens::parse(text);
    let replaced = replace_tokens(text, &listed);
    let parsed_replaced = Tokens::parse(&replaced.text);

    match parsed {
        Err(error) => {
            let shown = error.to_string();
            assert_eq!(
                shown,
                format!("tokens line {}: {}", error.line, error.reason)
            );
            if error.line == 0 {
                assert!(
                    listed.is_empty(),
                    "line 0 for a file listing tokens: {text:?}"
                );
            } else {
                assert!(
                    listed.iter().any(|line| line.number == error.line),
                    "{shown:?} names a line that lists nothing: {text:?}"
                );
            }
            let replaced_error = parsed_replaced.as_ref().err();
            let shown_replaced = replaced_error.map(ToString::to_string).unwrap_or_default();
            for line in listed
                .iter()
                .filter(|line| error.line == 0 || line.number <= error.line)
            {
                if line.token.len() >= MIN_TOKEN_LEN && shown.contains(line.token) {
                    assert!(
                        shown_replaced.contains(line.token),
                        "the error {shown:?} shows the token {:?} of line {}: {text:?}",
                        line.token,
                        line.number
                    );
                }
            }
            assert_eq!(
                replaced_error,
                Some(&error),
                "the error depends on the tokens' characters: {text:?} against {:?}",
                replaced.text
            );
        }
        Ok(tokens) => {
            let replaced_tokens = parsed_replaced
                .unwrap_or_else(|e| panic!("{text:?} parses, {:?} fails: {e}", replaced.text));
            check_tokens(text, &listed, &tokens);
            assert_eq!(tokens.len(), replaced_tokens.len());
            for line in &listed {
                if let Some(new) = replaced.clear.get(line.token) {
                    assert_eq!(
                        tokens.scopes(line.token),
                        replaced_tokens.scopes(new),
                        "{text:?} against {:?}",
                        replaced.text
                    );
                }
            }
        }
    }
});

/// The lines that list something, split as `Tokens::parse` splits them.
fn listed(text: &str) -> Vec<Listed<'_>> {
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or_default().trim();
        let mut fields = line.split_whitespace();
        let Some(token) = fields.next() else {
            continue;
        };
        let scopes = fields.next();
        out.push(Listed {
            number: index + 1,
            token,
            scopes,
            fields: 1 + usize::from(scopes.is_some()) + fields.count(),
        });
    }
    out
}

struct Replaced {
    text: String,
    /// Each clear token (`MIN_TOKEN_LEN` or longer) and the token that replaced it.
    clear: HashMap<String, String>,
}

/// `text` with every token field replaced in place, one for one: a clear token of
/// `MIN_TOKEN_LEN` bytes or more by another clear token of its length; `sha256:` and 64 hex
/// digits by another such digest (the new token's digest when it was a listed clear token's);
/// any other `sha256:` field by an equally long one that is no digest either. Shorter clear tokens
/// are kept (the parser refuses them at once, saying their length).
fn replace_tokens(text: &str, listed: &[Listed<'_>]) -> Replaced {
    let mut clear: HashMap<String, String> = HashMap::new();
    for line in listed {
        // Kept as they are: digests, tokens too short, and what the parser refuses for how it
        // starts (`SHA256:` in another case, a byte-order mark), whatever follows.
        let miscased = line
            .token
            .get(..7)
            .is_some_and(|p| p.eq_ignore_ascii_case("sha256:"));
        if line.token.starts_with("sha256:")
            || line.token.len() < MIN_TOKEN_LEN
            || miscased
            || line.token.starts_with('\u{feff}')
        {
            continue;
        }
        let id = clear.len();
        // 64 hex digits (refused: a digest without `sha256:`) by 64 other hex digits.
        let bare_digest =
            line.token.len() == 64 && line.token.bytes().all(|b| b.is_ascii_hexdigit());
        clear.entry(line.token.to_owned()).or_insert_with(|| {
            if bare_digest {
                format!("{id:064x}")
            } else {
                format!("{:~<width$}", format!("Q{id}"), width = line.token.len())
            }
        });
    }
    let digest_of_clear: HashMap<String, &str> = clear
        .iter()
        .map(|(old, new)| (digest(old), new.as_str()))
        .collect();
    let mut digests: HashMap<String, String> = HashMap::new();

    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for line in listed {
        let start = line.token.as_ptr() as usize - text.as_ptr() as usize;
        out.push_str(&text[at..start]);
        at = start + line.token.len();
        let new = match line.token.strip_prefix("sha256:") {
            Some(digits) if digits.len() == 64 && digits.bytes().all(|b| b.is_ascii_hexdigit()) => {
                let digits = digits.to_ascii_lowercase();
                let next = digests.len();
                let new = digests.entry(digits.clone()).or_insert_with(|| {
                    match digest_of_clear.get(&digits) {
                        Some(token) => digest(token),
                        None => format!("{next:064x}"),
                    }
                });
                format!("sha256:{new}")
            }
            Some("") => line.token.to_owned(),
            Some(digits) => format!("sha256:{}", "z".repeat(digits.len())),
            None => match clear.get(line.token) {
                Some(new) => new.clone(),
                None => line.token.to_owned(),
            },
        };
        out.push_str(&new);
    }
    out.push_str(&text[at..]);
    Replaced { text: out, clear }
}

/// The 64 lower-case hex digits of `token`'s SHA-256, as the tokens file writes them.
fn digest(token: &str) -> String {
    let line = hashed_line(token, "s");
    line["sha256:".len().."sha256:".len() + 64].to_owned()
}

fn check_tokens(text: &str, listed: &[Listed<'_>], tokens: &Tokens) {
    assert_eq!(tokens.len(), listed.len(), "{text:?}");
    assert_eq!(tokens.is_empty(), listed.is_empty());
    assert!(!tokens.is_empty(), "an empty file parses: {text:?}");
    for line in listed {
        assert_eq!(
            line.fields, 2,
            "line {} has {} fields: {text:?}",
            line.number, line.fields
        );
        let scopes = line.scopes.expect("two fields");
        // `SCOPE:give-back:metrics`: the scope, and what else the token may do in it.
        let name_of = |item: &str| item.split(':').next().unwrap_or_default().to_owned();
        let expected = if name_of(scopes) == "*" {
            Scopes::All
        } else {
            Scopes::Only(scopes.split(',').map(name_of).collect())
        };
        if !line.token.starts_with("sha256:") {
            let given_back = |name: &str| {
                scopes.split(',').any(|item| {
                    let scope = name_of(item);
                    (scope == name || scope == "*")
                        && item.split(':').skip(1).any(|p| p == "give-back")
                })
            };
            for item in scopes.split(',') {
                let name = name_of(item);
                let name = if name == "*" {
                    "any-scope"
                } else {
                    name.as_str()
                };
                assert_eq!(
                    tokens.may_give_back(line.token, name),
                    given_back(name),
                    "{:?} giving back in {name:?}: {text:?}",
                    line.token
                );
            }
        }
        match line.token.strip_prefix("sha256:") {
            Some(_) => assert!(
                tokens.scopes(line.token).is_none(),
                "the digest field {:?} works as a token: {text:?}",
                line.token
            ),
            None => {
                assert!(line.token.len() >= MIN_TOKEN_LEN, "{text:?}");
                assert_eq!(tokens.scopes(line.token), Some(&expected), "{text:?}");
            }
        }
        // The rule of the scopes listed, whichever token they belong to.
        if let Scopes::Only(names) = &expected {
            for name in names {
                assert!(
                    validate_name(NameKind::Scope, name).is_ok(),
                    "scope {name:?} accepted: {text:?}"
                );
                if !line.token.starts_with("sha256:") {
                    assert!(tokens.allows(line.token, name));
                }
            }
        }
        if !line.token.starts_with("sha256:") {
            let other = not_in(&expected);
            assert_eq!(
                tokens.allows(line.token, &other),
                expected == Scopes::All,
                "{:?} and scope {other:?}: {text:?}",
                line.token
            );
        }
    }
    // A token no line lists (not even as a digest: none is the digest of this one).
    let mut unlisted = String::from("unlisted-token-0123456789");
    while listed.iter().any(|line| {
        line.token == unlisted
            || line
                .token
                .strip_prefix("sha256:")
                .is_some_and(|digits| digits.eq_ignore_ascii_case(&digest(&unlisted)))
    }) {
        unlisted.push('x');
    }
    assert!(tokens.scopes(&unlisted).is_none(), "{text:?}");
    assert!(!tokens.allows(&unlisted, "shop"), "{text:?}");
}

/// A valid scope name not among `scopes`.
fn not_in(scopes: &Scopes) -> String {
    let mut name = String::from("zz-not-listed");
    if let Scopes::Only(names) = scopes {
        while names.contains(&name) {
            name.push('z');
        }
    }
    name
}
