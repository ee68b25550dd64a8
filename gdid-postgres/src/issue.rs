//! `gdid_next(scope, sequence)`: ids issued by the database itself.
//!
//! Each session keeps a block of counters per sequence, as `CREATE SEQUENCE … CACHE` does, and
//! serves ids from it. A block is reserved through `gdid::Store` on a connection of the
//! extension's own to this database: the same counter rows (`gdid_counters`), authority record
//! (`gdid_authority`) and rules, failover fence included, as a Rust service's generators use, so
//! that the two never issue the same id. The reservation commits on that connection before the
//! first id of the block is returned, never in the caller's transaction: a rolled-back insert
//! leaves the counter moved past the block (as `nextval` does), and the ids it took are not
//! issued again.
//!
//! That connection logs in as a role of the DBA's (`gdid.role`, `gdid_issuer` by default), never
//! as the caller, over this server's Unix socket: the socket's folder, the port and the
//! database's name are read from the server's own variables (never through SQL, which the caller
//! could shadow with functions of their own), each percent-encoded into the URL. See
//! docs/architecture.md, "The extension's connection", for why.
//!
//! Settings ([`register_settings`]):
//! - `gdid.cache` (any user; 1 to 1,000,000, 100 by default): the smallest block a session
//!   reserves, and its first.
//! - `gdid.cache_max` (any user; 1 to 1,000,000,000, 1,000,000 by default): the largest. Between
//!   the two, each block is sized as a Rust generator sizes its own (`gdid::engine::sizing`): for
//!   one second at the rate the session took ids of that sequence since its last block, a rise
//!   followed at once, a fall by halves. A bulk insert reserves a handful of blocks, a trickle
//!   blocks of `gdid.cache`. Set both to one number for blocks of that fixed size.
//! - `gdid.role` (postgresql.conf; `gdid_issuer` by default): the role the connection logs in as.
//! - `gdid.schema` (postgresql.conf; `public` by default): the schema of the gdid tables.
//! - `gdid.authority` (postgresql.conf; -1, unset, by default, else 0 to 15): the authority
//!   number the store is opened as.
//! - `gdid.owner` (postgresql.conf; unset by default): a role the store trusts to own the gdid
//!   tables and their schema, besides superusers, the database's owner and the connection's own
//!   role (the store URL's `owner=`): say, the DBA's role that made them with `gdid schema
//!   apply`. Membership in an owner's role is never enough.
//! - `gdid.scopes` (superusers set it, in postgresql.conf or per database; unset by default):
//!   which roles may issue from which scope, `scope=role` pairs (`*=role`: every scope). A
//!   caller that is no superuser issues only from a scope granted to its `current_user` or to a
//!   role whose privileges it has; see `grants.rs`.
//! - `gdid.max_sequences_per_scope` (postgresql.conf; 10,000 by default, 0 for no bound): the
//!   most sequences one scope may hold records of; a call naming a sequence new to a scope that
//!   holds that many is refused (the store URL's `max_sequences_per_scope=`).
//! - `gdid.store_url` (postgresql.conf; superusers and members of `pg_read_all_settings`, such
//!   as `pg_monitor`'s, read it): a URL that replaces the connection above. It holds no
//!   password (one is refused, [`PasswordInSetting`]): the connection finds its password in the
//!   passfile of the server's operating-system user (`~/.pgpass`, or the file `PGPASSFILE`
//!   names in the server's environment).
//!
//! The ids of a block the session does not use are never issued (gaps), but at its end a
//! session gives the unused end of each block back ([`give_back_at_exit`]): by the store's
//! conditional write, so only while nothing was reserved after it, and within
//! [`GIVE_BACK_TIME`].
//!
//! A session holds at most one connection (opened on its first reservation, closed on a failure
//! and opened again no sooner than a back-off of 1 s doubling to 30 s) and blocks of at most
//! [`MAX_SEQUENCES`] sequences. A reservation waits for the server as long as it takes, but a
//! cancel or `statement_timeout` of the calling session ends the wait.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::time::{Duration, Instant};

use gdid::StoreError;
use gdid::engine::sizing::{RateEstimator, block_size};
use gdid::engine::{Block, NameKind, validate_name};
use percent_encoding::{NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::prelude::*;

use crate::error::raise;
use crate::value::Gdid;

/// `gdid.cache`: the smallest block a session reserves (and its first).
static CACHE: GucSetting<i32> = GucSetting::<i32>::new(100);

/// `gdid.cache_max`: the largest block a session reserves.
static CACHE_MAX: GucSetting<i32> = GucSetting::<i32>::new(1_000_000);

/// How long a block should last at the rate a session takes ids: a reservation (a durable
/// commit, about 1 ms) then costs at most a few thousandths of the time spent issuing.
const BLOCK_LASTS: Duration = Duration::from_secs(1);

/// The longest a session's end waits for its blocks to be given back.
const GIVE_BACK_TIME: Duration = Duration::from_millis(500);

/// `gdid.role`: the role the extension's connection logs in as.
static ROLE: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"gdid_issuer"));

/// `gdid.schema`: the schema of the gdid tables.
static SCHEMA: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(Some(c"public"));

/// `gdid.authority`: the authority number the store is opened as; -1, the store's own.
static AUTHORITY: GucSetting<i32> = GucSetting::<i32>::new(-1);

/// `gdid.owner`: a role trusted to own the gdid tables and their schema (the URL's `owner=`).
static OWNER: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// `gdid.max_sequences_per_scope`: the most sequences one scope may hold records of; 0, no
/// bound.
static MAX_SEQUENCES_PER_SCOPE: GucSetting<i32> = GucSetting::<i32>::new(10_000);

/// `gdid.store_url`: a URL replacing this server's socket and `gdid.role`.
static STORE_URL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// `gdid.store_url` holds a password: every member of `pg_read_all_settings` (monitoring
/// agents, given `pg_monitor`, are) reads the setting, so a password there is theirs too.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PasswordInSetting;

impl std::fmt::Display for PasswordInSetting {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(
            "gdid.store_url holds a password, which every member of pg_read_all_settings \
             (pg_monitor's members among them) can read: take it out of the URL and put it in \
             the passfile of the server's operating-system user (~/.pgpass, or the file \
             PGPASSFILE names), where the connection finds it",
        )
    }
}

/// Whether `url` carries a password: after its user (`user:password@`) or as its `password`
/// parameter. A URL that does not parse is left to the store, which says what is wrong with it
/// (without its value).
fn holds_password(url: &str) -> bool {
    let Some((_, rest)) = url.split_once("://") else {
        return false;
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let in_user = authority
        .rsplit_once('@')
        .is_some_and(|(user, _)| user.contains(':'));
    let in_parameters = rest.split_once('?').is_some_and(|(_, query)| {
        query
            .split(['&', '#'])
            .filter_map(|pair| pair.split('=').next())
            .any(|key| percent_decode_str(key).decode_utf8_lossy() == "password")
    });
    in_user || in_parameters
}

#[cfg(test)]
mod parameter_tests {
    use super::Settings;

    fn settings(owner: Option<&str>, most: Option<u64>) -> Settings {
        Settings {
            role: "gdid_issuer".to_owned(),
            schema: "public".to_owned(),
            authority: None,
            store_url: None,
            owner: owner.map(str::to_owned),
            max_sequences_per_scope: most,
        }
    }

    #[test]
    fn the_settings_add_the_parameters_a_url_does_not_give_itself() {
        let both = settings(Some("ids admin"), Some(500));
        assert_eq!(
            both.parameters("postgres://db/ids?schema=gdid"),
            "&owner=ids%20admin&max_sequences_per_scope=500"
        );
        assert_eq!(
            both.parameters("postgresql://db/ids?owner=dba&max_sequences_per_scope=9"),
            ""
        );
        // A store of another kind keeps its own rules on sequences.
        assert_eq!(both.parameters("mysql://db/ids"), "&owner=ids%20admin");
        assert_eq!(settings(None, None).parameters("postgres://db/ids"), "");
    }
}

#[cfg(test)]
mod password_tests {
    use super::holds_password;

    #[test]
    fn a_password_is_found_after_the_user_or_as_a_parameter_however_spelled() {
        for url in [
            "postgres://app:secret@db/ids",
            "postgres://app:@db/ids",
            "postgresql://app@db/ids?sslmode=require&password=secret",
            "postgres://app@db/ids?%70assword=secret",
        ] {
            assert!(holds_password(url), "{url}");
        }
        for url in [
            "postgres://app@db/ids",
            "postgres://db/ids?user=app&passfile=/etc/gdid/pgpass",
            "postgres://app@db/pass:word",
            "not a url",
        ] {
            assert!(!holds_password(url), "{url}");
        }
    }
}

/// The most sequences a session holds blocks of: past it, the least recently used block is
/// dropped (its unused ids are gaps, never issued).
pub const MAX_SEQUENCES: usize = 1_000;

/// The wait after a failed connection or reservation before the next attempt; it doubles with
/// each failure in a row, up to [`LONGEST_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_secs(1);

/// The longest wait between attempts.
const LONGEST_BACKOFF: Duration = Duration::from_secs(30);

/// Where the DBA's set-up is described, for messages.
const SETUP: &str = "docs/interoperability.md, \"Setting up gdid_next\"";

/// Registers the settings, and reserves their prefix: a `gdid.` setting the extension does not
/// define is an error rather than a placeholder (whose value any role could read).
pub(crate) fn register_settings() {
    GucRegistry::define_int_guc(
        c"gdid.cache",
        c"The smallest block of GDID counters a session reserves for gdid_next (and its first).",
        c"Blocks grow from it with the rate the session takes ids, up to gdid.cache_max.",
        &CACHE,
        1,
        1_000_000,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"gdid.cache_max",
        c"The largest block of GDID counters a session reserves for gdid_next.",
        c"A block lasts about one second at the session's rate, within gdid.cache and this; the \
          unused end of each is given back when the session ends.",
        &CACHE_MAX,
        1,
        1_000_000_000,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"gdid.role",
        c"The role gdid_next's own connection logs in as, over this server's Unix socket.",
        c"Never the caller's: a role of the DBA's, let in by pg_hba.conf (a peer map, or a \
          password in the server's passfile).",
        &ROLE,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"gdid.schema",
        c"The schema of the gdid tables (gdid_counters, gdid_authority) gdid_next reserves from.",
        c"",
        &SCHEMA,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"gdid.authority",
        c"The authority number gdid_next's store is opened as (0 to 15; -1: the store's own).",
        c"A store that recorded another number is refused.",
        &AUTHORITY,
        -1,
        15,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"gdid.owner",
        c"A role trusted to own the gdid tables and their schema, besides superusers, the database's owner and gdid.role.",
        c"The store refuses tables or a schema of any other owner: whoever owns them could move the counters back.",
        &OWNER,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"gdid.scopes",
        c"Which roles may issue from which scope with gdid_next: scope=role pairs, comma-separated (*=role: every scope).",
        c"A caller that is no superuser issues only from a scope granted to its current_user or to a role whose privileges it has. Unset: only superusers issue.",
        &crate::grants::SCOPES,
        GucContext::Suset,
        GucFlags::default(),
    );
    GucRegistry::define_int_guc(
        c"gdid.max_sequences_per_scope",
        c"The most sequences one scope may hold records of in gdid_next's store (0: no bound).",
        c"A call naming a sequence new to a scope that holds this many is refused.",
        &MAX_SEQUENCES_PER_SCOPE,
        0,
        i32::MAX,
        GucContext::Sighup,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"gdid.store_url",
        c"A URL gdid_next reserves blocks through, in place of this server's socket and gdid.role.",
        c"Superusers and members of pg_read_all_settings read it: a password is refused; put it in the passfile of the server's OS user.",
        &STORE_URL,
        GucContext::Sighup,
        GucFlags::SUPERUSER_ONLY,
    );
    #[cfg(not(any(feature = "pg13", feature = "pg14")))]
    // SAFETY: called from _PG_init, in the backend's (or the postmaster's) one thread, with a
    // NUL-terminated prefix.
    unsafe {
        pg_sys::MarkGUCPrefixReserved(c"gdid".as_ptr());
    }
}

/// The next id of (`scope`, `sequence`), from the session's block, a new block reserved when it
/// is used up.
///
/// ```sql
/// CREATE TABLE orders (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 'orders'), item text);
/// ```
#[pg_extern(volatile, parallel_unsafe, strict)]
fn gdid_next(scope: &str, sequence: &str) -> Gdid {
    crate::grants::check(scope, sequence);
    SESSION.with_borrow_mut(|session| {
        session
            .get_or_insert_with(Session::new)
            .next(scope, sequence)
    })
}

// Only roles granted EXECUTE issue ids: every id moves a counter shared with every other issuer.
extension_sql!(
    "REVOKE EXECUTE ON FUNCTION gdid_next(text, text) FROM PUBLIC;\n",
    name = "gdid_next_not_public",
    requires = [gdid_next],
);

thread_local! {
    /// The session's issuer: a backend is one process running one thread.
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// What a session keeps: its connection to the store and a block per sequence.
struct Session {
    runtime: tokio::runtime::Runtime,
    connection: Connection,
    /// By scope, then sequence: looked up with the arguments as they are, no key built per id.
    blocks: HashMap<String, HashMap<String, Remaining>>,
    /// The sequences in `blocks`, at most [`MAX_SEQUENCES`].
    sequences: usize,
    /// Counts the reservations: a block's `used` is the count when it was last reserved.
    clock: u64,
}

/// The ids left of a block: counters `next..end` of `era`, `authority`; and how fast the
/// session takes ids of its sequence.
#[derive(Debug)]
struct Remaining {
    era: u32,
    authority: u8,
    next: u64,
    end: u64,
    /// When it was reserved ([`Session::clock`]): the oldest is dropped first.
    used: u64,
    /// The ids of the sequence this session has taken, and the rate it takes them at.
    taken: u64,
    rate: RateEstimator,
}

/// The store a session reserves through, the settings it was opened with, and the last failure.
#[derive(Default)]
struct Connection {
    settings: Option<Settings>,
    store: Option<gdid::Store>,
    failure: Option<Failure>,
}

/// A failed attempt: when, the wait before the next, and what went wrong.
struct Failure {
    at: Instant,
    wait: Duration,
    message: String,
}

/// The settings a connection is opened with: a change opens a new one.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Settings {
    role: String,
    schema: String,
    authority: Option<u8>,
    store_url: Option<String>,
    owner: Option<String>,
    max_sequences_per_scope: Option<u64>,
}

impl Settings {
    fn current() -> Settings {
        let text = |setting: &GucSetting<Option<CString>>| {
            setting
                .get()
                .map(|value| value.to_string_lossy().trim().to_owned())
                .filter(|value| !value.is_empty())
        };
        Settings {
            role: text(&ROLE).unwrap_or_default(),
            schema: text(&SCHEMA).unwrap_or_default(),
            authority: u8::try_from(AUTHORITY.get()).ok(),
            store_url: text(&STORE_URL),
            owner: text(&OWNER),
            max_sequences_per_scope: u64::try_from(MAX_SEQUENCES_PER_SCOPE.get())
                .ok()
                .filter(|&most| most > 0),
        }
    }

    /// The store URL's parameters these settings add: `owner=`, and `max_sequences_per_scope=`
    /// to a PostgreSQL URL (the store of another kind of `gdid.store_url` keeps its own rules),
    /// each `&name=value`, leaving out those `url` gives itself.
    fn parameters(&self, url: &str) -> String {
        let given =
            |name: &str| url.contains(&format!("?{name}=")) || url.contains(&format!("&{name}="));
        let postgres = url.starts_with("postgres://") || url.starts_with("postgresql://");
        let mut parameters = String::new();
        if let Some(owner) = &self.owner
            && !given("owner")
        {
            parameters.push_str(&format!("&owner={}", encode(owner)));
        }
        if let Some(most) = self.max_sequences_per_scope
            && postgres
            && !given("max_sequences_per_scope")
        {
            parameters.push_str(&format!("&max_sequences_per_scope={most}"));
        }
        parameters
    }

    /// The URL to open: `gdid.store_url`, or this server's socket as `gdid.role` with
    /// `gdid.schema`; `Err` is the message to raise.
    fn url(&self) -> Result<String, String> {
        if let Some(url) = &self.store_url {
            if holds_password(url) {
                return Err(PasswordInSetting.to_string());
            }
            // The URL's own parameters are the ones it means.
            let parameters = self.parameters(url);
            return Ok(match parameters.strip_prefix('&') {
                Some(first) if !url.contains('?') => format!("{url}?{first}"),
                _ => format!("{url}{parameters}"),
            });
        }
        if self.role.is_empty() {
            return Err(
                "gdid.role is empty: set it to the role gdid_next's connection logs in \
                        as (gdid_issuer by default) and reload the configuration"
                    .to_owned(),
            );
        }
        if self.schema.is_empty() {
            return Err(
                "gdid.schema is empty: set it to the schema of the gdid tables (public \
                        by default) and reload the configuration"
                    .to_owned(),
            );
        }
        let server = this_server()?;
        let url = format!(
            "postgres://{}@localhost/{}?host={}&port={}&schema={}&application_name=gdid_next",
            encode(&self.role),
            encode(&server.database),
            encode(&server.socket),
            server.port,
            encode(&self.schema),
        );
        let parameters = self.parameters(&url);
        Ok(url + &parameters)
    }

    /// Who the connection is, in messages: the role, or "gdid.store_url" (never its value).
    fn who(&self) -> String {
        match self.store_url {
            Some(_) => "the store of gdid.store_url".to_owned(),
            None => format!("role {} (gdid.role)", self.role),
        }
    }
}

impl Session {
    fn new() -> Session {
        // One thread, the backend's: the runtime runs only while a call waits on it.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|error| {
                raise(
                    PgSqlErrorCode::ERRCODE_INSUFFICIENT_RESOURCES,
                    format!(
                        "gdid_next cannot start its I/O runtime ({error}): free resources on \
                         the server and try again"
                    ),
                    None,
                )
            });
        // SAFETY: registers a callback of the right signature, once per backend (the session is
        // made once), in its one thread.
        unsafe { pg_sys::on_proc_exit(Some(give_back_at_exit), pg_sys::Datum::from(0)) };
        Session {
            runtime,
            connection: Connection::default(),
            blocks: HashMap::new(),
            sequences: 0,
            clock: 0,
        }
    }

    fn next(&mut self, scope: &str, sequence: &str) -> Gdid {
        let known = self
            .blocks
            .get_mut(scope)
            .and_then(|sequences| sequences.get_mut(sequence));
        if let Some(remaining) = known {
            if let Some(id) = remaining.take() {
                return id;
            }
        } else {
            check_name(NameKind::Scope, scope);
            check_name(NameKind::Sequence, sequence);
        }
        // The sequence's history (the ids taken, their rate), kept across its blocks.
        let (taken, mut rate) = self
            .blocks
            .get_mut(scope)
            .and_then(|sequences| sequences.remove(sequence))
            .map_or((0, RateEstimator::default()), |used_up| {
                self.sequences -= 1;
                (used_up.taken, used_up.rate)
            });
        let size = block_size_for(rate.observe(tokio::time::Instant::now(), taken));
        self.clock += 1;
        let mut remaining = self.reserve(scope, sequence, size);
        // The wait for the store is not time without demand.
        rate.restart(tokio::time::Instant::now(), taken);
        remaining.used = self.clock;
        remaining.taken = taken;
        remaining.rate = rate;
        let id = remaining.take().unwrap_or_else(|| {
            raise(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                "gdid_next received an empty block from its store: report it to the gdid \
                 developers"
                    .to_owned(),
                None,
            )
        });
        self.keep(scope, sequence, remaining);
        id
    }

    /// Keeps `remaining` as the block of (`scope`, `sequence`), dropping the least recently
    /// reserved block first when the session holds [`MAX_SEQUENCES`] already.
    fn keep(&mut self, scope: &str, sequence: &str, remaining: Remaining) {
        let known = self
            .blocks
            .get(scope)
            .is_some_and(|sequences| sequences.contains_key(sequence));
        if !known && self.sequences >= MAX_SEQUENCES {
            self.drop_oldest();
        }
        let replaced = self
            .blocks
            .entry(scope.to_owned())
            .or_default()
            .insert(sequence.to_owned(), remaining);
        if replaced.is_none() {
            self.sequences += 1;
        }
    }

    /// Drops the block reserved longest ago (its unused ids are never issued).
    fn drop_oldest(&mut self) {
        let oldest = self
            .blocks
            .iter()
            .flat_map(|(scope, sequences)| {
                sequences
                    .iter()
                    .map(move |(sequence, remaining)| (remaining.used, scope, sequence))
            })
            .min()
            .map(|(_, scope, sequence)| (scope.clone(), sequence.clone()));
        if let Some((scope, sequence)) = oldest
            && let Some(sequences) = self.blocks.get_mut(&scope)
        {
            sequences.remove(&sequence);
            self.sequences -= 1;
            if sequences.is_empty() {
                self.blocks.remove(&scope);
            }
        }
    }

    /// A new block of `size` counters, committed in the store before it is returned.
    fn reserve(&mut self, scope: &str, sequence: &str, size: u64) -> Remaining {
        let settings = Settings::current();
        // A store dropped here (a failure, new settings, an interrupt unwinding) hands its
        // connection back inside the runtime's context, as its pool needs.
        let _entered = self.runtime.enter();
        let connection = &mut self.connection;
        if connection.settings.as_ref() != Some(&settings) {
            // New settings (a reload): a new connection, tried at once.
            *connection = Connection {
                settings: Some(settings.clone()),
                ..Connection::default()
            };
        }
        // SAFETY: a read of the server's shared state, in the backend's one thread.
        if settings.store_url.is_none() && unsafe { pg_sys::RecoveryInProgress() } {
            raise(
                PgSqlErrorCode::ERRCODE_READ_ONLY_SQL_TRANSACTION,
                "gdid_next cannot reserve ids on a read-only standby: call it on the primary"
                    .to_owned(),
                None,
            )
        }
        if let Some(failure) = &connection.failure
            && failure.at.elapsed() < failure.wait
        {
            let left = failure.wait.saturating_sub(failure.at.elapsed());
            raise(
                PgSqlErrorCode::ERRCODE_CONNECTION_FAILURE,
                format!(
                    "{} (gdid_next tries again in {} s)",
                    failure.message,
                    left.as_secs() + 1
                ),
                None,
            )
        }
        // Taken out for the call: a failure, or an interrupt unwinding through the wait, leaves
        // the session without it, and the next reservation opens a new one.
        let store = connection.store.take();
        let result = match store {
            Some(store) => Ok(store),
            None => open(&self.runtime, &settings),
        }
        .and_then(|store| {
            match allocate(&self.runtime, &store, scope, sequence, size) {
                Ok(block) => Ok((store, block)),
                Err(Refusal::Refused(message)) => {
                    // The store answered, and refused this name: the connection is sound.
                    connection.store = Some(store);
                    raise(
                        PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
                        message,
                        None,
                    )
                }
                Err(Refusal::Failed(message)) => Err(message),
            }
        });
        match result {
            Ok((store, block)) => {
                connection.store = Some(store);
                connection.failure = None;
                Remaining {
                    era: block.era(),
                    authority: block.authority(),
                    next: block.start(),
                    end: block.start() + block.len(),
                    used: 0,
                    taken: 0,
                    rate: RateEstimator::default(),
                }
            }
            Err(message) => {
                let wait = connection
                    .failure
                    .as_ref()
                    .map_or(FIRST_BACKOFF, |last| (last.wait * 2).min(LONGEST_BACKOFF));
                connection.failure = Some(Failure {
                    at: Instant::now(),
                    wait,
                    message: message.clone(),
                });
                raise(PgSqlErrorCode::ERRCODE_CONNECTION_FAILURE, message, None)
            }
        }
    }
}

/// Opens the store of `settings` (at most one connection, the backend's), or says what to do.
fn open(runtime: &tokio::runtime::Runtime, settings: &Settings) -> Result<gdid::Store, String> {
    let url = settings.url()?;
    // One connection: the backend's calls come one at a time.
    let mut options = gdid::Store::options().max_connections(1);
    if let Some(number) = settings.authority {
        options = options.authority(number);
    }
    wait_interruptibly(runtime, options.open(&url))
        .map_err(|error| opening_failed(settings, &error))
}

/// What to do when the store of `settings` could not be opened.
fn opening_failed(settings: &Settings, error: &StoreError) -> String {
    let who = settings.who();
    let cause = cause(error);
    match (error, &settings.store_url) {
        (StoreError::Connect { .. }, None) => format!(
            "gdid_next connects as {who}, which could not log in over this server's Unix socket \
             ({cause}): create the role and let it in as {SETUP} says"
        ),
        (StoreError::Connect { .. }, Some(_)) => format!(
            "gdid_next could not connect to {who} ({cause}): a superuser should check that URL \
             and its server"
        ),
        (StoreError::Schema { .. }, _) => format!(
            "gdid_next could not find or create its tables in schema {} (gdid.schema) as {who} \
             ({cause}): grant that role CREATE and USAGE on the schema, as {SETUP} says",
            settings.schema
        ),
        (StoreError::Authority { .. } | StoreError::AuthorityNumber { .. }, _) => {
            let asked = settings
                .authority
                .map_or_else(|| "its own".to_owned(), |number| number.to_string());
            format!(
                "gdid_next could not open its store as authority number {asked} (gdid.authority) \
                 ({cause}): set gdid.authority to the number the store recorded, or to -1 to use \
                 it"
            )
        }
        _ => format!(
            "gdid_next could not open its store as {who} ({cause}): check the settings as {SETUP} \
             says"
        ),
    }
}

/// Why a block was not reserved, and what to raise.
enum Refusal {
    /// The store refused the names (a sequence past `gdid.max_sequences_per_scope`, a second
    /// spelling): the caller's to change; the connection is kept.
    Refused(String),
    /// The store or the connection failed: tried again after a back-off.
    Failed(String),
}

/// Reserves a block of `size` counters of (`scope`, `sequence`) in `store`, or says what went
/// wrong.
fn allocate(
    runtime: &tokio::runtime::Runtime,
    store: &gdid::Store,
    scope: &str,
    sequence: &str,
    size: u64,
) -> Result<gdid::engine::Block, Refusal> {
    let Some(authority) = store.authority() else {
        return Err(Refusal::Failed(
            "gdid_next's store has no authority number: set gdid.authority to one (0 to 15)"
                .to_owned(),
        ));
    };
    wait_interruptibly(runtime, authority.allocate_boxed(scope, sequence, size)).map_err(|error| {
        match error {
            gdid::AuthorityError::InvalidName(invalid) => {
                Refusal::Refused(format!("gdid_next('{scope}', '{sequence}'): {invalid}"))
            }
            error => Refusal::Failed(format!(
                "gdid_next('{scope}', '{sequence}') could not reserve a block ({error}): see the \
                 server's state (a read-only standby cannot issue) and try again"
            )),
        }
    })
}

/// The error's cause, without the URL the store's errors begin with.
fn cause(error: &StoreError) -> String {
    match std::error::Error::source(error) {
        Some(source) => source.to_string(),
        None => error.to_string(),
    }
}

/// Raises `invalid_parameter_value` for a name the engine refuses, before the store is touched.
fn check_name(kind: NameKind, name: &str) {
    if let Err(invalid) = validate_name(kind, name) {
        raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!(
                "gdid_next: {invalid}: use 1 to 80 ASCII letters and digits, with '_', '.' or '-' \
                 inside"
            ),
            None,
        )
    }
}

/// The size of a session's next block of a sequence it takes `rate` ids per second of (`None`:
/// its first), by the engine's rule: enough for [`BLOCK_LASTS`], within `gdid.cache` and
/// `gdid.cache_max`.
fn block_size_for(rate: Option<f64>) -> u64 {
    let min = u64::try_from(CACHE.get()).unwrap_or(1).max(1);
    let max = u64::try_from(CACHE_MAX.get()).unwrap_or(1).max(min);
    block_size(rate.unwrap_or(0.0), BLOCK_LASTS, 0.0, min, max)
}

/// Gives back the unused end of each block the session holds, when the backend exits: those
/// ids are then issued later instead of lost, if nothing was reserved after them (the store's
/// conditional write decides). Best effort, within [`GIVE_BACK_TIME`] in all: a store that
/// does not answer in time, or refuses, leaves gaps, never a repeat. Registered with
/// `on_proc_exit` at the session's first `gdid_next`; never raises (the backend is exiting).
unsafe extern "C-unwind" fn give_back_at_exit(_code: std::ffi::c_int, _arg: pg_sys::Datum) {
    let _ = std::panic::catch_unwind(|| {
        let _ = SESSION.try_with(|session| {
            if let Ok(mut session) = session.try_borrow_mut()
                && let Some(session) = session.as_mut()
            {
                session.give_back();
            }
        });
    });
}

impl Session {
    /// Gives back the unused end of every block (see [`give_back_at_exit`]).
    fn give_back(&mut self) {
        let Some(store) = self.connection.store.take() else {
            return;
        };
        let Some(authority) = store.authority() else {
            return;
        };
        let tails: Vec<(String, String, Block)> = self
            .blocks
            .drain()
            .flat_map(|(scope, sequences)| {
                sequences
                    .into_iter()
                    .filter_map(move |(sequence, remaining)| {
                        let tail = remaining.tail()?;
                        Some((scope.clone(), sequence, tail))
                    })
            })
            .collect();
        let _entered = self.runtime.enter();
        let _ = self
            .runtime
            .block_on(tokio::time::timeout(GIVE_BACK_TIME, async {
                for (scope, sequence, tail) in &tails {
                    let _ = authority.give_back_boxed(scope, sequence, *tail).await;
                }
            }));
        drop(store);
    }
}

impl Remaining {
    /// The ids not taken, as a block; `None` when none is left.
    fn tail(&self) -> Option<Block> {
        Block::new(self.era, self.authority, self.next, self.end - self.next).ok()
    }

    fn take(&mut self) -> Option<Gdid> {
        if self.next >= self.end {
            return None;
        }
        let counter = self.next;
        self.next += 1;
        self.taken += 1;
        let id = gdid::Gdid::from_parts(self.era, self.authority, counter).unwrap_or_else(|e| {
            raise(
                PgSqlErrorCode::ERRCODE_INTERNAL_ERROR,
                format!(
                    "gdid_next received an invalid block ({e}): report it to the gdid developers"
                ),
                None,
            )
        });
        Some(Gdid(id))
    }
}

/// Runs `future` to its end on `runtime`, checking for the session's interrupts (a cancel,
/// `statement_timeout`) every 50 ms: an interrupt raises its ERROR, and the future is dropped
/// inside the runtime's context (a connection it held is handed back there).
fn wait_interruptibly<F: Future>(runtime: &tokio::runtime::Runtime, future: F) -> F::Output {
    // Declared before the future: dropped after it, unwinding too.
    let _entered = runtime.enter();
    let mut future = std::pin::pin!(future);
    loop {
        // The timer is made inside the runtime, whose clock it needs.
        let step = runtime.block_on(async {
            tokio::time::timeout(Duration::from_millis(50), future.as_mut()).await
        });
        match step {
            Ok(output) => return output,
            Err(_) => {
                pg_sys::check_for_interrupts!();
            }
        }
    }
}

/// This server's Unix socket folder, port and database: read from the server's variables, which
/// no role can shadow.
struct ThisServer {
    socket: String,
    port: i32,
    database: String,
}

/// This server's socket, port and the session's database, or the message to raise.
fn this_server() -> Result<ThisServer, String> {
    // SAFETY: the server's variables, set at start (the socket folders, the port) and at
    // connection (the database's id), read in the backend's one thread; a C string or NULL.
    let (directories, port, database) = unsafe {
        let directories = pg_sys::Unix_socket_directories;
        let directories = (!directories.is_null())
            .then(|| CStr::from_ptr(directories).to_string_lossy().into_owned());
        let name = pg_sys::get_database_name(pg_sys::MyDatabaseId);
        let database =
            (!name.is_null()).then(|| CStr::from_ptr(name).to_string_lossy().into_owned());
        (directories, pg_sys::PostPortNumber, database)
    };
    let socket = first_directory(directories.as_deref().unwrap_or_default()).ok_or_else(|| {
        "gdid_next connects over this server's Unix socket, and the server has none \
         (unix_socket_directories): give it one, or have a superuser set gdid.store_url"
            .to_owned()
    })?;
    let socket = if socket.starts_with('/') {
        socket
    } else {
        // Relative to the data folder, the server's working folder.
        // SAFETY: the data folder's path, set at start; a C string.
        let data = unsafe { CStr::from_ptr(pg_sys::DataDir) }.to_string_lossy();
        format!("{data}/{socket}")
    };
    let database = database.ok_or_else(|| {
        "gdid_next cannot find this session's database: reconnect and try again".to_owned()
    })?;
    Ok(ThisServer {
        socket,
        port,
        database,
    })
}

/// The first folder of a `unix_socket_directories` value (comma-separated, each maybe in
/// double quotes), if any; an abstract socket (`@name`) is not one a client here can name.
fn first_directory(directories: &str) -> Option<String> {
    let first = directories.split(',').next()?.trim();
    let first = first
        .strip_prefix('"')
        .and_then(|quoted| quoted.strip_suffix('"'))
        .unwrap_or(first);
    (!first.is_empty() && !first.starts_with('@')).then(|| first.to_owned())
}

/// `text` percent-encoded, every byte but letters and digits.
fn encode(text: &str) -> String {
    utf8_percent_encode(text, NON_ALPHANUMERIC).to_string()
}
