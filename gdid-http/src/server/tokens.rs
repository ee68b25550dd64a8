//! Bearer tokens and the scopes each may use, read from a tokens file.
//!
//! One token a line, `TOKEN SCOPE[,SCOPE…]`, `*` for every scope; `#` starts a comment. A token
//! is kept as its SHA-256 only, and may be written so in the file (`sha256:` and 64 hex digits),
//! so that the file need not hold a usable secret:
//!
//! ```text
//! # the order service: its own scope only
//! sha256:6b86b273ff34fce19d6b804eff5a3f5747ada4eaa22f1d49c01e52ddb7875b4b shop
//! # the operators' token, every scope
//! 8f0c3a0e-long-random-token-for-ops *
//! ```

use std::collections::HashMap;
use std::fmt;

use gdid_core::generator::{NameKind, validate_name};
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
    by_hash: HashMap<Digest, Scopes>,
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
            let mut fields = line.split_whitespace();
            let (Some(token), Some(scopes), None) = (fields.next(), fields.next(), fields.next())
            else {
                return Err(bad("expected `TOKEN SCOPE[,SCOPE…]` (two fields)".into()));
            };
            let hash = match token.strip_prefix("sha256:") {
                Some(digits) => parse_digest(digits).map_err(bad)?,
                None if token.len() < MIN_TOKEN_LEN => {
                    return Err(bad(format!(
                        "a token is at least {MIN_TOKEN_LEN} characters (this one has {})",
                        token.len()
                    )));
                }
                None => hash(token),
            };
            let scopes = parse_scopes(scopes).map_err(bad)?;
            if tokens.by_hash.insert(hash, scopes).is_some() {
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

    /// The scopes `token` may use, or `None` for a token not listed.
    pub fn scopes(&self, token: &str) -> Option<&Scopes> {
        self.by_hash.get(&hash(token))
    }

    /// The caller `token` is: its digest (who it is, without the secret) and its scopes.
    pub(crate) fn caller(&self, token: &str) -> Option<(Digest, &Scopes)> {
        let digest = hash(token);
        self.by_hash.get(&digest).map(|scopes| (digest, scopes))
    }

    /// Whether `token` is listed and may use `scope`.
    pub fn allows(&self, token: &str, scope: &str) -> bool {
        self.scopes(token)
            .is_some_and(|scopes| scopes.allows(scope))
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

/// A new token: 32 bytes from the system's random source, as 64 hex digits.
///
/// ```
/// let token = gdid_http::server::new_token();
/// assert_eq!(token.len(), 64);
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
    hex::encode(bytes)
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

fn parse_scopes(list: &str) -> Result<Scopes, String> {
    if list == "*" {
        return Ok(Scopes::All);
    }
    let scopes: Vec<String> = list.split(',').map(str::to_owned).collect();
    for (index, scope) in scopes.iter().enumerate() {
        if scope == "*" {
            return Err("`*` stands alone: it already means every scope".into());
        }
        // The name is not repeated: a token written in the scopes' place would be.
        validate_name(NameKind::Scope, scope)
            .map_err(|e| format!("scope {} of the list: {}", index + 1, e.reason))?;
    }
    Ok(Scopes::Only(scopes))
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
        assert_eq!(tokens.len(), 2);
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
            ("# nothing\n".to_owned(), 0, "no token"),
        ] {
            let error = Tokens::parse(&text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.reason.contains(says), "{text:?}: {error}");
            assert!(!error.to_string().contains("secret"), "{error}");
        }
    }

    #[test]
    fn debug_shows_no_digest() {
        let tokens = Tokens::parse("0123456789abcdef-a *").unwrap();
        assert_eq!(format!("{tokens:?}"), "Tokens { len: 1, .. }");
    }
}
