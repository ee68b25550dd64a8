//! Bearer tokens and the scopes each may use, read from a tokens file.
//!
//! One token a line, `TOKEN SCOPE[,SCOPE…]`, `*` for every scope; `#` starts a comment. A token
//! is kept as its SHA-256 only, and may be written so in the file (`sha256:` and 64 hex digits),
//! so that the file need not hold a usable secret. Read strictly: what looks like a digest but
//! is not written as one (`SHA256:` in capitals, 64 hex digits without `sha256:`, a byte-order
//! mark before the first) is refused with its line, never taken as a clear token that no client
//! sends, or that a thief who reads the file could:
//!
//! A scope written `SCOPE:give-back` (or `*:give-back`) also lets the token give the unused end
//! of its blocks back (`POST /v1/blocks/give-back`), so that those ids are issued later instead
//! of lost: the server cannot know which ids a client handed out, so this is for clients
//! trusted as the server's own code is. `SCOPE:metrics` lets it read that scope's series at
//! `GET /v1/metrics`; both may follow one name (`shop:give-back:metrics`).
//!
//! ```text
//! # the order service: its own scope only, giving back what its generators did not use
//! sha256:6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b shop:give-back
//! # the operators' token, every scope
//! 8f0c3a0e-long-random-token-for-ops *
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use gdid_engine::{NameKind, backend::validate_name};
use ring::digest::{SHA256, digest};

/// A token's SHA-256: who a caller is, without the secret.
pub(crate) type Digest = [u8; 32];

/// The shortest token accepted in clear: anything shorter can be guessed.
pub const MIN_TOKEN_LEN: usize = 16;

/// The tokens a server accepts, each kept as its SHA-256 with the scopes it may use.
///
/// ```
/// use gdid_http::server::Tokens;
///
/// let tokens = Tokens::parse("0123456789abcdef-shop shop,billing\n0123456789abcdef-all *\n")?;
/// assert!(tokens.allows("0123456789abcdef-shop", "billing"));
/// assert!(!tokens.allows("0123456789abcdef-shop", "hr"));
/// assert!(tokens.allows("0123456789abcdef-all", "hr"));
/// assert!(tokens.scopes("wrong").is_none());
/// # Ok::<(), gdid_http::server::TokensError>(())
/// ```
#[derive(Clone, Default)]
pub struct Tokens {
    by_hash: HashMap<Digest, Arc<Grant>>,
    /// How many were written in clear (not as `sha256:` digests).
    clear: usize,
}

/// What one token may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// The scopes it may use.
    pub scopes: Scopes,
    /// The scopes it may give ids back in (`SCOPE:give-back`), a part of `scopes`.
    pub give_back: Scopes,
    /// The scopes whose metrics it may read at `/v1/metrics` (`SCOPE:metrics`), a part of
    /// `scopes`.
    pub metrics: Scopes,
}

/// The scopes one token may use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scopes {
    /// `*`: every scope.
    All,
    /// The scopes listed.
    Only(Vec<String>),
}

impl Scopes {
    /// Whether `scope` is one of them.
    pub fn allows(&self, scope: &str) -> bool {
        match self {
            Scopes::All => true,
            Scopes::Only(scopes) => scopes.iter().any(|s| s == scope),
        }
    }
}

/// A tokens file that cannot be used: which line, and why. It never holds a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("tokens line {line}: {reason}")]
pub struct TokensError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub reason: String,
}

impl Tokens {
    /// Reads the text of a tokens file.
    ///
    /// # Errors
    ///
    /// [`TokensError`] for a line without scopes, a token shorter than [`MIN_TOKEN_LEN`], a bad
    /// `sha256:` digest, a scope that fails [`validate_name`], a token listed twice, or a file
    /// with no token at all (line 0).
    pub fn parse(text: &str) -> Result<Tokens, TokensError> {
        let mut tokens = Tokens::default();
        // Each scope's spelling by its lower case, and the line that first spelled it.
        let mut spellings: HashMap<String, (String, usize)> = HashMap::new();
        for (index, line) in text.lines().enumerate() {
            let number = index + 1;
            let bad = |reason: String| TokensError {
                line: number,
                reason,
            };
            let line = line.split('#').next().unwrap_or_default().trim();
            if line.is_empty() {
                continue;
            }
            if index == 0 && line.starts_with('\u{feff}') {
                return Err(bad(
                    "the file starts with a byte-order mark (U+FEFF): save it without one".into(),
                ));
            }
            let mut fields = line.split_whitespace();
            let (Some(token), Some(scopes), None) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(bad("expected `TOKEN SCOPE[,SCOPE…]` (two fields)".into()));
            };
            let hash = match token.strip_prefix("sha256:") {
                Some(digits) => parse_digest(digits).map_err(bad)?,
                None if token
                    .get(..7)
                    .is_some_and(|prefix| prefix.eq_ignore_ascii_case("sha256:")) =>
                {
                    return Err(bad(
                        "write the digest's prefix `sha256:` in lower case".into()
                    ));
                }
                None if is_bare_digest(token) => {
                    return Err(bad(
                        "64 hex digits without `sha256:`: a digest is written `sha256:HEX` (as a \
                         clear token, whoever reads the file could send it); tokens made by `gdid \
                         token` start with `gdid_`"
                            .into(),
                    ));
                }
                None if token.len() < MIN_TOKEN_LEN => {
                    return Err(bad(format!(
                        "a token is at least {MIN_TOKEN_LEN} characters (this one has {})",
                        token.len()
                    )));
                }
                None => {
                    tokens.clear += 1;
                    hash(token)
                }
            };
            let grant = parse_scopes(scopes).map_err(bad)?;
            if let Scopes::Only(names) = &grant.scopes {
                for name in names {
                    let (first, at) = spellings
                        .entry(name.to_lowercase())
                        .or_insert_with(|| (name.clone(), number));
                    if first != name {
                        return Err(bad(format!(
                            "scope {name:?} differs only in case from {first:?} of line {at}: a \
                             store may compare names without case (MariaDB's collation does), so \
                             the two would share counters; spell them alike"
                        )));
                    }
                }
            }
            if tokens.by_hash.insert(hash, Arc::new(grant)).is_some() {
                return Err(bad("the token is listed twice".into()));
            }
        }
        if tokens.by_hash.is_empty() {
            return Err(TokensError {
                line: 0,
                reason: "the file lists no token: every request would be refused".into(),
            });
        }
        Ok(tokens)
    }

    /// Those of these tokens that `text`, a tokens file that [`parse`](Self::parse) refuses,
    /// still lists, each with what it may do now: the first field of a line, in clear or as
    /// `sha256:HEX`, is taken for a token however wrong the rest of the file is. A token taken
    /// out of the file is refused even when the file cannot be used; none is added.
    ///
    /// ```
    /// use gdid_http::server::Tokens;
    ///
    /// let tokens = Tokens::parse("0123456789abcdef-kept shop\n0123456789abcdef-gone *\n")?;
    /// let broken = "0123456789abcdef-kept shop,\n";
    /// assert!(Tokens::parse(broken).is_err());
    /// let kept = tokens.still_listed(broken);
    /// assert!(kept.allows("0123456789abcdef-kept", "shop"));
    /// assert!(kept.scopes("0123456789abcdef-gone").is_none());
    /// # Ok::<(), gdid_http::server::TokensError>(())
    /// ```
    pub fn still_listed(&self, text: &str) -> Tokens {
        let mut listed = HashSet::new();
        let mut in_clear = HashSet::new();
        for line in text.lines() {
            let line = line.split('#').next().unwrap_or_default();
            let line = line.trim().trim_start_matches('\u{feff}');
            let Some(token) = line.split_whitespace().next() else {
                continue;
            };
            match token.strip_prefix("sha256:") {
                Some(digits) => {
                    if let Ok(digest) = parse_digest(digits) {
                        listed.insert(digest);
                    }
                }
                None => {
                    let digest = hash(token);
                    listed.insert(digest);
                    in_clear.insert(digest);
                }
            }
        }
        let by_hash: HashMap<Digest, Arc<Grant>> = self
            .by_hash
            .iter()
            .filter(|(digest, _)| listed.contains(*digest))
            .map(|(digest, grant)| (*digest, grant.clone()))
            .collect();
        let clear = by_hash.keys().filter(|d| in_clear.contains(*d)).count();
        Tokens { by_hash, clear }
    }

    /// The scopes `token` may use, or `None` for a token not listed.
    pub fn scopes(&self, token: &str) -> Option<&Scopes> {
        self.by_hash.get(&hash(token)).map(|grant| &grant.scopes)
    }

    /// Whether `token` is listed and may give ids back in `scope` (`SCOPE:give-back`).
    pub fn may_give_back(&self, token: &str, scope: &str) -> bool {
        self.by_hash
            .get(&hash(token))
            .is_some_and(|grant| grant.give_back.allows(scope))
    }

    /// The caller `token` is: its digest (who it is, without the secret) and what it may do.
    pub(crate) fn caller(&self, token: &str) -> Option<(Digest, Arc<Grant>)> {
        let digest = hash(token);
        self.by_hash
            .get(&digest)
            .map(|grant| (digest, grant.clone()))
    }

    /// Whether `token` is listed and may use `scope`.
    pub fn allows(&self, token: &str, scope: &str) -> bool {
        self.scopes(token)
            .is_some_and(|scopes| scopes.allows(scope))
    }

    /// How many of them the file holds in clear (a secret anyone who reads it can send), not as
    /// `sha256:` digests.
    pub fn in_clear(&self) -> usize {
        self.clear
    }

    /// How many tokens are listed.
    pub fn len(&self) -> usize {
        self.by_hash.len()
    }

    /// Whether none is.
    pub fn is_empty(&self) -> bool {
        self.by_hash.is_empty()
    }
}

impl fmt::Debug for Tokens {
    /// The count only: never a digest.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tokens")
            .field("len", &self.by_hash.len())
            .finish_non_exhaustive()
    }
}

/// The line of a tokens file that lists `token` by its digest, for `scopes`: what to write
/// instead of the token itself.
///
/// ```
/// let line = gdid_http::server::hashed_line("0123456789abcdef-shop", "shop");
/// assert!(line.starts_with("sha256:") && line.ends_with(" shop"));
/// let tokens = gdid_http::server::Tokens::parse(&line)?;
/// assert!(tokens.allows("0123456789abcdef-shop", "shop"));
/// # Ok::<(), gdid_http::server::TokensError>(())
/// ```
pub fn hashed_line(token: &str, scopes: &str) -> String {
    format!("sha256:{} {scopes}", hex::encode(hash(token)))
}

/// A new token: `gdid_` and 32 bytes from the system's random source as 64 hex digits (the
/// prefix tells it from a digest, and lets secret scanners find it).
///
/// ```
/// let token = gdid_http::server::new_token();
/// assert!(token.starts_with("gdid_") && token.len() == 69);
/// assert_ne!(token, gdid_http::server::new_token());
/// ```
///
/// # Panics
///
/// When the system's random source fails (no `getrandom`), as every key generator does.
pub fn new_token() -> String {
    use ring::rand::{SecureRandom, SystemRandom};
    let mut bytes = [0; 32];
    SystemRandom::new()
        .fill(&mut bytes)
        .expect("the system's random source failed");
    format!("gdid_{}", hex::encode(bytes))
}

/// Whether `token` is 64 hex digits: a SHA-256 digest pasted without its `sha256:`.
fn is_bare_digest(token: &str) -> bool {
    token.len() == 64 && token.bytes().all(|b| b.is_ascii_hexdigit())
}

fn hash(token: &str) -> Digest {
    let mut out = [0; 32];
    out.copy_from_slice(digest(&SHA256, token.as_bytes()).as_ref());
    out
}

fn parse_digest(digits: &str) -> Result<Digest, String> {
    let mut out = [0; 32];
    hex::decode_to_slice(digits, &mut out)
        .map_err(|_| "`sha256:` is followed by 64 hex digits".to_owned())?;
    Ok(out)
}

/// Reads a token's list of scopes: `*`, or names separated by commas, each followed by the
/// permissions it grants besides issuing ids (`:give-back`, `:metrics`).
fn parse_scopes(list: &str) -> Result<Grant, String> {
    let items: Vec<&str> = list.split(',').collect();
    let (mut scopes, mut give_back, mut metrics) = (Vec::new(), Vec::new(), Vec::new());
    for (index, item) in items.iter().enumerate() {
        let mut parts = item.split(':');
        let scope = parts.next().unwrap_or_default();
        let (mut may_give_back, mut may_read_metrics) = (false, false);
        for permission in parts {
            match permission {
                "give-back" => may_give_back = true,
                "metrics" => may_read_metrics = true,
                // Not repeated: a token written in the scopes' place would be.
                _ => {
                    return Err(format!(
                        "scope {} of the list: a permission after `:` is `give-back` or \
                         `metrics`",
                        index + 1
                    ));
                }
            }
        }
        if scope == "*" {
            if items.len() > 1 {
                return Err("`*` stands alone: it already means every scope".into());
            }
            let granted = |yes: bool| {
                if yes {
                    Scopes::All
                } else {
                    Scopes::Only(Vec::new())
                }
            };
            return Ok(Grant {
                scopes: Scopes::All,
                give_back: granted(may_give_back),
                metrics: granted(may_read_metrics),
            });
        }
        // The name is not repeated: a token written in the scopes' place would be.
        validate_name(NameKind::Scope, scope)
            .map_err(|e| format!("scope {} of the list: {}", index + 1, e.reason))?;
        if may_give_back {
            give_back.push(scope.to_owned());
        }
        if may_read_metrics {
            metrics.push(scope.to_owned());
        }
        scopes.push(scope.to_owned());
    }
    Ok(Grant {
        scopes: Scopes::Only(scopes),
        give_back: Scopes::Only(give_back),
        metrics: Scopes::Only(metrics),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashed_and_clear_tokens_are_one_thing() {
        let tokens = Tokens::parse(&format!(
            "# comment\n\n{}\n0123456789abcdef-b * # ops\n",
            hashed_line("0123456789abcdef-a", "shop,hr")
        ))
        .unwrap();
        assert_eq!((tokens.len(), tokens.in_clear()), (2, 1));
        assert_eq!(
            tokens.scopes("0123456789abcdef-a"),
            Some(&Scopes::Only(vec!["shop".into(), "hr".into()]))
        );
        assert!(tokens.allows("0123456789abcdef-b", "anything"));
        assert!(!tokens.allows("0123456789abcdef-a", "billing"));
        assert!(!tokens.allows("sha256:whatever", "shop"));
    }

    #[test]
    fn bad_lines_are_named_and_never_echo_the_token() {
        let secret = "0123456789abcdef-secret";
        for (text, line, says) in [
            (secret.to_owned(), 1, "two fields"),
            (format!("\n{secret} shop extra"), 2, "two fields"),
            ("short shop".to_owned(), 1, "at least 16"),
            ("sha256:abc shop".to_owned(), 1, "64 hex digits"),
            (format!("{secret} shop,"), 1, "scope 2 of the list"),
            (
                format!("0123456789abcdef-other {secret}!"),
                1,
                "scope 1 of the list",
            ),
            (format!("{secret} shop,*"), 1, "stands alone"),
            (format!("{secret} a b"), 1, "two fields"),
            (format!("{secret} shop\n{secret} hr"), 2, "twice"),
            (format!("\u{feff}{secret} shop"), 1, "byte-order mark"),
            (format!("SHA256:{} shop", "ab".repeat(32)), 1, "lower case"),
            (
                format!("# c\nSha256:{} shop", "ab".repeat(32)),
                2,
                "lower case",
            ),
            (format!("{} shop", "ab".repeat(32)), 1, "without `sha256:`"),
            (
                format!("{secret} Shop\n0123456789abcdef-other billing,shop"),
                2,
                "differs only in case from \"Shop\" of line 1",
            ),
            ("# nothing\n".to_owned(), 0, "no token"),
        ] {
            let error = Tokens::parse(&text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.reason.contains(says), "{text:?}: {error}");
            assert!(!error.to_string().contains("secret"), "{error}");
        }
    }

    #[test]
    fn give_back_is_granted_per_scope() {
        let tokens = Tokens::parse(
            "0123456789abcdef-a shop:give-back,hr\n0123456789abcdef-b *:give-back\n\
             0123456789abcdef-c *\n",
        )
        .unwrap();
        assert!(tokens.allows("0123456789abcdef-a", "shop"));
        assert!(tokens.allows("0123456789abcdef-a", "hr"));
        assert!(tokens.may_give_back("0123456789abcdef-a", "shop"));
        assert!(!tokens.may_give_back("0123456789abcdef-a", "hr"));
        assert!(tokens.may_give_back("0123456789abcdef-b", "anything"));
        assert!(tokens.allows("0123456789abcdef-c", "anything"));
        assert!(!tokens.may_give_back("0123456789abcdef-c", "anything"));
        assert!(!tokens.may_give_back("unlisted-0123456789", "shop"));
        let refused = Tokens::parse("0123456789abcdef-a shop:give-back:gift").unwrap_err();
        assert!(refused.reason.contains("scope 1 of the list"), "{refused}");
        let both = Tokens::parse("0123456789abcdef-a shop:metrics:give-back,hr").unwrap();
        let (_, grant) = both.caller("0123456789abcdef-a").unwrap();
        assert_eq!(grant.metrics, Scopes::Only(vec!["shop".into()]));
        assert_eq!(grant.give_back, Scopes::Only(vec!["shop".into()]));
    }

    #[test]
    fn a_file_that_cannot_be_used_keeps_only_the_tokens_it_lists() {
        let (a, b, c) = (
            "0123456789abcdef-a",
            "0123456789abcdef-b",
            "0123456789abcdef-c",
        );
        let tokens = Tokens::parse(&format!("{a} shop\n{b} *\n{c} hr\n")).unwrap();
        // A by its digest on a broken line, B in clear after a comment, C only in a comment.
        let text = format!(
            "\u{feff}# {c} hr\n{},\n  {b} *  # ops\nsha256:not-hex hr\n",
            hashed_line(a, "shop")
        );
        assert!(Tokens::parse(&text).is_err());
        let kept = tokens.still_listed(&text);
        assert_eq!((kept.len(), kept.in_clear()), (2, 1));
        assert!(kept.allows(a, "shop") && !kept.allows(a, "hr"));
        assert!(kept.allows(b, "hr"));
        assert!(kept.scopes(c).is_none());
        assert!(tokens.still_listed("").is_empty());
    }

    #[test]
    fn debug_shows_no_digest() {
        let tokens = Tokens::parse("0123456789abcdef-a *").unwrap();
        assert_eq!(format!("{tokens:?}"), "Tokens { len: 1, .. }");
    }
}
