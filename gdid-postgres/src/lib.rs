//! # gdid-postgres
//!
//! GDID as a native PostgreSQL type, `CREATE EXTENSION gdid`:
//!
//! - the type `gdid`: 12 bytes, fixed length, stored without a length header, ordered as its
//!   bytes (btree and hash operator classes), read in any text form (`0:1:7`, 24 hex digits, an
//!   ELink) and written as `era:authority:counter`, sent and received as its 12 bytes by drivers
//!   of the binary protocol, cast from and to `bytea` and from `text` ([`value`], [`forms`]);
//! - `gdid_next('shop', 'orders')`: ids issued by the database itself, usable as a column
//!   `DEFAULT`, from blocks of the same counter rows, authority record and rules that
//!   `gdid::Store::open` uses on that database, reserved on a connection of the extension's own
//!   (never in the caller's transaction), as a role of the DBA's (`gdid.role`, never the
//!   caller's), and cached per session as `CREATE SEQUENCE … CACHE` does ([`issue`]). Callers
//!   need `EXECUTE` on it, which `PUBLIC` does not have, and a grant of the scope they issue
//!   from in `gdid.scopes` (superusers need neither).
//!
//! ```sql
//! CREATE EXTENSION gdid;
//! CREATE TABLE orders (id gdid PRIMARY KEY DEFAULT gdid_next('shop', 'orders'), item text);
//! INSERT INTO orders (item) VALUES ('book');
//! SELECT id, gdid_counter(id), id::bytea FROM orders;   -- 0:1:1 | 1 | \x000000001000000000000001
//! ```
//!
//! Installing it: `scripts/pg-extension install`, then the DBA's set-up of `gdid_next` (the
//! library preloaded, the role `gdid_issuer` let in over the socket, the grants):
//! docs/interoperability.md, "Setting up gdid_next".

// A fixed-length type is a pointer PostgreSQL hands over and takes back: its datum glue, its
// binary receive function and PostgreSQL's hash are `unsafe` (allowed in Cargo.toml for this
// crate alone), each block with its reason.

::pgrx::pg_module_magic!(name, version);

mod error;
pub mod forms;
mod grants;
pub mod issue;
pub mod value;

pub use value::Gdid;

/// Registers the settings of [`issue`] when the library is loaded.
#[pgrx::pg_guard]
pub extern "C-unwind" fn _PG_init() {
    issue::register_settings();
}

#[cfg(any(test, feature = "pg_test"))]
mod tests;

/// What `cargo pgrx test` needs of the crate: the settings of its test instance.
#[cfg(test)]
pub mod pg_test {
    /// Nothing to set up before the tests.
    pub fn setup(_options: Vec<&str>) {}

    /// The instance's settings: none beyond the defaults.
    #[must_use]
    pub fn postgresql_conf_options() -> Vec<&'static str> {
        vec![]
    }
}
