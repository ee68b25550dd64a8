//! `gdid_next(scope, sequence)`: ids issued by the database itself.
//!
//! Each session keeps a block of counters per sequence, as `CREATE SEQUENCE … CACHE` does, and
//! serves ids from it. A block is reserved through `gdid::Store::open` on a connection of the
//! extension's own to this database: the same counter rows (`gdid_counters`), authority record
//! (`gdid_authority`) and rules, failover fence included, as a Rust service's generators use, so
//! that the two never issue the same id. The reservation commits on that connection before the
//! first id of the block is returned, never in the caller's transaction: a rolled-back insert
//! leaves the counter moved past the block (as `nextval` does), and the ids it took are not
//! issued again.
//!
//! Settings:
//! - `gdid.cache` (1 to 1,000,000; 100 by default): the counters a session reserves at a time.
//!   The ids of a block the session does not use are never issued (gaps, as with a sequence's
//!   cache).
//! - `gdid.store_url` (superusers only): the URL the extension connects with. Unset, it is this
//!   server's Unix socket, this database and the session's user, which the server's
//!   `pg_hba.conf` must let in without a password (`trust` or `peer` with a map); otherwise set a
//!   URL with the credentials of a role that may update `gdid_counters`.
//!
//! A reservation waits for the server as long as it takes, but a cancel or
//! `statement_timeout` of the calling session ends the wait.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::CString;
use std::time::Duration;

use percent_encoding::{NON_ALPHANUMERIC, utf8_percent_encode};
use pgrx::guc::{GucContext, GucFlags, GucRegistry, GucSetting};
use pgrx::prelude::*;
use pgrx::spi::Spi;

use crate::error::raise;
use crate::value::Gdid;

/// `gdid.cache`: how many counters a session reserves at a time.
static CACHE: GucSetting<i32> = GucSetting::<i32>::new(100);

/// `gdid.store_url`: the URL the extension reserves blocks through; unset, this server's socket.
static STORE_URL: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// Registers `gdid.cache` and `gdid.store_url`.
pub(crate) fn register_settings() {
    GucRegistry::define_int_guc(
        c"gdid.cache",
        c"How many GDID counters a session reserves at a time for gdid_next.",
        c"The counters of a block a session does not use are never issued (gaps).",
        &CACHE,
        1,
        1_000_000,
        GucContext::Userset,
        GucFlags::default(),
    );
    GucRegistry::define_string_guc(
        c"gdid.store_url",
        c"The URL gdid_next reserves blocks through.",
        c"Unset: this server's Unix socket, this database and the session's user.",
        &STORE_URL,
        GucContext::Suset,
        GucFlags::SUPERUSER_ONLY,
    );
}

/// The next id of (`scope`, `sequence`), from the session's block, a new block reserved when it
/// is used up.
///
/// ```sql
/// CREATE TABLE orders (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 'orders'), item text);
/// ```
#[pg_extern(volatile, parallel_unsafe, strict)]
fn gdid_next(scope: &str, sequence: &str) -> Gdid {
    let setting = STORE_URL
        .get()
        .map(|url| url.to_string_lossy().into_owned())
        .filter(|url| !url.is_empty());
    SESSION.with_borrow_mut(|session| {
        let session = match session {
            Some(session) if session.setting == setting => session,
            _ => session.insert(Session::open(setting)),
        };
        session.next(scope, sequence)
    })
}

thread_local! {
    /// The session's issuer: a backend is one process running one thread.
    static SESSION: RefCell<Option<Session>> = const { RefCell::new(None) };
}

/// What a session keeps: the store it reserves through and a block per sequence.
struct Session {
    /// `gdid.store_url` when the session was opened: a change opens a new one.
    setting: Option<String>,
    /// The setting, or this server's socket when it is unset.
    url: String,
    runtime: tokio::runtime::Runtime,
    store: Option<gdid::Store>,
    /// By scope, then sequence: looked up with the arguments as they are, no key built per id.
    blocks: HashMap<String, HashMap<String, Remaining>>,
}

/// The ids left of a block: counters `next..end` of `era`, `authority`.
#[derive(Debug)]
struct Remaining {
    era: u32,
    authority: u8,
    next: u64,
    end: u64,
}

impl Session {
    fn open(setting: Option<String>) -> Session {
        // One thread, the backend's: the runtime runs only while a call waits on it.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|error| error!("gdid_next cannot start its I/O runtime: {error}"));
        Session {
            url: setting.clone().unwrap_or_else(this_server),
            setting,
            runtime,
            store: None,
            blocks: HashMap::new(),
        }
    }

    fn next(&mut self, scope: &str, sequence: &str) -> Gdid {
        if let Some(remaining) = self
            .blocks
            .get_mut(scope)
            .and_then(|sequences| sequences.get_mut(sequence))
            && let Some(id) = remaining.take()
        {
            return id;
        }
        let mut remaining = self.reserve(scope, sequence);
        let id = remaining
            .take()
            .unwrap_or_else(|| error!("gdid_next: the store returned an empty block"));
        self.blocks
            .entry(scope.to_owned())
            .or_default()
            .insert(sequence.to_owned(), remaining);
        id
    }

    /// A new block of `gdid.cache` counters, committed in the store before it is returned.
    fn reserve(&mut self, scope: &str, sequence: &str) -> Remaining {
        let size = u64::try_from(CACHE.get()).unwrap_or(1).max(1);
        let (url, store) = (&self.url, &mut self.store);
        let block = wait_interruptibly(&self.runtime, async {
            if store.is_none() {
                *store = Some(gdid::Store::open(url).await.map_err(|e| e.to_string())?);
            }
            let authority = store
                .as_ref()
                .and_then(gdid::Store::authority)
                .ok_or("the store has no authority number")?;
            authority
                .allocate_boxed(scope, sequence, size)
                .await
                .map_err(|e| e.to_string())
        });
        match block {
            Ok(block) => Remaining {
                era: block.era(),
                authority: block.authority(),
                next: block.start(),
                end: block.start() + block.len(),
            },
            Err(reason) => {
                // A store that failed may have lost its connection: open it again next time.
                self.store = None;
                raise(
                    PgSqlErrorCode::ERRCODE_CONNECTION_FAILURE,
                    format!(
                        "gdid_next('{scope}', '{sequence}') could not reserve a block: {reason}"
                    ),
                    Some("gdid_next reserves blocks on a connection of its own (gdid.store_url)."),
                )
            }
        }
    }
}

impl Remaining {
    fn take(&mut self) -> Option<Gdid> {
        if self.next >= self.end {
            return None;
        }
        let counter = self.next;
        self.next += 1;
        let id = gdid::Gdid::from_parts(self.era, self.authority, counter)
            .unwrap_or_else(|e| error!("gdid_next: the store returned an invalid block: {e}"));
        Some(Gdid(id))
    }
}

/// Runs `future` to its end on `runtime`, checking for the session's interrupts (a cancel,
/// `statement_timeout`) every 50 ms: an interrupt raises its ERROR, and the future is dropped.
fn wait_interruptibly<F: Future>(runtime: &tokio::runtime::Runtime, future: F) -> F::Output {
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

/// The URL of this server's Unix socket, this database and the session's user. Read with a
/// read-only query: it assigns the caller's transaction no id, and runs on a standby too.
fn this_server() -> String {
    const QUERY: &str = "SELECT current_setting('unix_socket_directories'), \
                         current_setting('port'), current_database()::text, session_user::text";
    let [sockets, port, database, user] = Spi::connect(|client| {
        let row = client.select(QUERY, Some(1), &[])?.first();
        let column = |i| row.get::<String>(i).map(Option::unwrap_or_default);
        Ok::<_, pgrx::spi::Error>([column(1)?, column(2)?, column(3)?, column(4)?])
    })
    .unwrap_or_else(|e| error!("gdid_next cannot read this server's settings: {e}"));
    let socket = sockets.split(',').next().unwrap_or_default().trim();
    let encode = |text: &str| utf8_percent_encode(text, NON_ALPHANUMERIC).to_string();
    format!(
        "postgres://{}@localhost/{}?host={}&port={port}",
        encode(&user),
        encode(&database),
        encode(socket),
    )
}
