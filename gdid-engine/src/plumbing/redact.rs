//! [`redact`]: a store URL fit to print. The one function every crate of the workspace uses
//! wherever a store is named (labels, errors, logs, command output).

/// Query parameters whose values are secrets: a key (percent-decoded, without `_` and `-`,
/// compared without regard to case) that contains one of these...
const SECRET_PARTS: [&str; 6] = [
    "password",
    "passwd",
    "secret",
    "token",
    "apikey",
    "credential",
];

/// ...or is one of these (MongoDB's `authMechanismProperties` can carry `AWS_SESSION_TOKEN:…`).
const SECRET_KEYS: [&str; 3] = ["pass", "pwd", "authmechanismproperties"];

/// What stands for a hidden secret.
const HIDDEN: &str = "***";

/// `url` without its secrets: the password of the user-info part (`user:***@host`) and the value
/// of every secret query parameter (`?password=***`). Any scheme; a URL without secrets comes
/// back as it is.
///
/// It errs on the side of hiding: a password written without escaping (holding `@`, `/`, `?`
/// or `:`) is hidden whole, up to the last `@` of the URL, so that no part of it is printed.
///
/// ```
/// use gdid_engine::plumbing::redact;
///
/// assert_eq!(
///     redact("mysql://root:secret@127.0.0.1:3306/test"),
///     "mysql://root:***@127.0.0.1:3306/test"
/// );
/// assert_eq!(
///     redact("postgres://h/db?user=app&password=secret"),
///     "postgres://h/db?user=app&password=***"
/// );
/// assert_eq!(redact("sqlite:ids.sqlite"), "sqlite:ids.sqlite");
/// ```
pub fn redact(url: &str) -> String {
    let (scheme, rest) = match url.split_once("://") {
        Some((scheme, rest)) => (Some(scheme), rest),
        None => (None, url),
    };
    // The user-info part ends at the last `@`: an unescaped `@` in a password comes before it.
    let (user_info, after) = match (scheme, rest.rfind('@')) {
        (Some(_), Some(at)) => (Some(&rest[..at]), &rest[at + 1..]),
        _ => (None, rest),
    };
    let mut out = String::with_capacity(url.len());
    if let Some(scheme) = scheme {
        out.push_str(scheme);
        out.push_str("://");
    }
    if let Some(user_info) = user_info {
        match user_info.split_once(':') {
            Some((user, _password)) => {
                out.push_str(user);
                out.push(':');
                out.push_str(HIDDEN);
            }
            None => out.push_str(user_info),
        }
        out.push('@');
    }
    out.push_str(after);
    hide_secret_parameters(&out)
}

/// `url` with the value of every secret parameter (`?key=` or `&key=`, wherever it stands: a
/// query can follow an `@` taken for the end of the user-info) hidden. A secret written with an
/// unescaped `&` reads as a secret parameter followed by parameters without `=`: those are
/// hidden with it.
fn hide_secret_parameters(url: &str) -> String {
    let mut out = String::with_capacity(url.len());
    let mut rest = url;
    // The text up to the first separator is no parameter.
    let first = rest.find(['?', '&']).unwrap_or(rest.len());
    out.push_str(&rest[..first]);
    rest = &rest[first..];
    let mut in_secret = false;
    while let Some(separator) = rest.chars().next() {
        let parameter_end = rest[1..].find(['?', '&']).map_or(rest.len(), |i| i + 1);
        let parameter = &rest[1..parameter_end];
        rest = &rest[parameter_end..];
        match parameter.split_once('=') {
            Some((key, _value)) if is_secret(key) => {
                out.push(separator);
                out.push_str(key);
                out.push('=');
                out.push_str(HIDDEN);
                in_secret = true;
            }
            None if in_secret => {} // the rest of the secret's value
            _ => {
                out.push(separator);
                out.push_str(parameter);
                in_secret = false;
            }
        }
    }
    out
}

fn is_secret(key: &str) -> bool {
    let key: String = percent_decoded(key.trim())
        .filter(|c| !matches!(c, '_' | '-'))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    SECRET_PARTS.iter().any(|part| key.contains(part)) || SECRET_KEYS.contains(&key.as_str())
}

/// The characters of `text` with each `%XX` escape of an ASCII character decoded (a key spelled
/// `%70assword` is `password` to the driver).
fn percent_decoded(text: &str) -> impl Iterator<Item = char> + '_ {
    let mut rest = text;
    std::iter::from_fn(move || {
        let mut chars = rest.chars();
        let c = chars.next()?;
        let escaped = rest
            .get(1..3)
            .filter(|_| c == '%')
            .and_then(|hex| u8::from_str_radix(hex, 16).ok())
            .filter(u8::is_ascii);
        match escaped {
            Some(byte) => {
                rest = &rest[3..];
                Some(char::from(byte))
            }
            None => {
                rest = chars.as_str();
                Some(c)
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::redact;

    /// Every form of URL a store is given in, with the secret `s3cr3t` somewhere in it.
    const WITH_SECRETS: &[(&str, &str)] = &[
        // An `@` in the query, after the user-info or without one.
        (
            "postgres://h/db?user=app@corp&password=s3cr3t",
            "postgres://h/db?user=app@corp&password=***",
        ),
        (
            "postgres://u:s3cr3t@h/db?user=app@corp&password=s3cr3t",
            "postgres://u:***@corp&password=***",
        ),
        (
            "mysql://root:s3cr3t@127.0.0.1:3306/test",
            "mysql://root:***@127.0.0.1:3306/test",
        ),
        (
            "mariadb://app:s3cr3t@db/test?ssl-mode=disabled",
            "mariadb://app:***@db/test?ssl-mode=disabled",
        ),
        (
            "postgres://u:s3cr3t@h/db?sslmode=disable",
            "postgres://u:***@h/db?sslmode=disable",
        ),
        (
            "postgresql://h:5432/db?user=u&password=s3cr3t",
            "postgresql://h:5432/db?user=u&password=***",
        ),
        (
            "postgres://h/db?PASSWORD=s3cr3t&application_name=x",
            "postgres://h/db?PASSWORD=***&application_name=x",
        ),
        (
            "postgres://h/db?ssl_password=s3cr3t",
            "postgres://h/db?ssl_password=***",
        ),
        // Unescaped characters in the password: `@`, `/`, `?`, `:`, `#`.
        (
            "mysql://root:s3@c/r?3:t#@127.0.0.1/test",
            "mysql://root:***@127.0.0.1/test",
        ),
        // Escaped ones.
        (
            "mysql://root:s3cr3t%40%2F@127.0.0.1/test",
            "mysql://root:***@127.0.0.1/test",
        ),
        (
            "mongodb://app:s3cr3t@a:27017,b:27017/?replicaSet=rs",
            "mongodb://app:***@a:27017,b:27017/?replicaSet=rs",
        ),
        (
            "mongodb+srv://app:s3cr3t@cluster.example/db",
            "mongodb+srv://app:***@cluster.example/db",
        ),
        (
            "mongodb://h/?authMechanism=PLAIN&password=s3cr3t",
            "mongodb://h/?authMechanism=PLAIN&password=***",
        ),
        ("sqlite:ids.sqlite?pwd=s3cr3t", "sqlite:ids.sqlite?pwd=***"),
        // Keys that name a secret without being one of the usual few.
        (
            "mongodb://h/?tls=true&tlsCertificateKeyFilePassword=s3cr3t",
            "mongodb://h/?tls=true&tlsCertificateKeyFilePassword=***",
        ),
        (
            "mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=AWS_SESSION_TOKEN:s3cr3t",
            "mongodb://h/?authMechanism=MONGODB-AWS&authMechanismProperties=***",
        ),
        (
            "postgres://h/db?client_secret=s3cr3t&api-key=s3cr3t&access_token=s3cr3t",
            "postgres://h/db?client_secret=***&api-key=***&access_token=***",
        ),
        // A key with a percent-escape, as the driver decodes it.
        (
            "postgres://h/db?%70assword=s3cr3t&sslmode=disable",
            "postgres://h/db?%70assword=***&sslmode=disable",
        ),
        // An unescaped `&` in a secret parameter's value.
        (
            "postgres://h/db?password=ab&s3cr3t&sslmode=disable",
            "postgres://h/db?password=***&sslmode=disable",
        ),
    ];

    #[test]
    fn no_secret_survives_in_any_url_form() {
        for &(url, redacted) in WITH_SECRETS {
            let got = redact(url);
            assert_eq!(got, redacted, "{url}");
            assert!(!got.contains("s3"), "{url} → {got}");
        }
    }

    #[test]
    fn urls_without_secrets_come_back_as_they_are() {
        for url in [
            "mysql://root@127.0.0.1:3306/test",
            "postgres://h/db",
            "mongodb://127.0.0.1:27018/?directConnection=true",
            "sqlite:ids.sqlite",
            "sqlite:/tmp/a@b/ids.sqlite",
            "postgres://h/db?sslmode=disable&application_name=orders&options",
            "memory",
            "",
        ] {
            assert_eq!(redact(url), url);
        }
    }
}
