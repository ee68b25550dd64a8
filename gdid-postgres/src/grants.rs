//! `gdid.scopes`: which roles may issue from which scope, granted by the DBA.
//!
//! `EXECUTE` on `gdid_next` lets a role move counters; which counters is a second grant, by scope:
//! the setting lists `scope=role` pairs, comma-separated, and `*` as the scope grants every scope:
//!
//! ```text
//! gdid.scopes = 'shop=shop_app, shop=shop_batch, billing=billing_app, *=gdid_admin'
//! ```
//!
//! A call of `gdid_next(scope, …)` issues only when the role it runs as has the privileges of a
//! role granted that scope (as a member of it that inherits, the way a table's privileges reach a
//! member), or is a superuser. That role is `current_user`: the role `SET ROLE` chose, the owner
//! of a `SECURITY DEFINER` function while it runs. It is read in the caller's backend at every
//! call, never on the extension's connection (whose role is `gdid.role`), and the check uses the
//! server's catalog caches, no SQL: nothing the caller defined runs in it. A block a session holds
//! serves only calls that pass the check, so a `SET ROLE` to a role without the grant gets nothing
//! from it. A call like the session's last one that passed (the same role and scope, the same
//! text of the setting, and no role or membership changed since, as the server's cache
//! invalidation reports) is answered without the lookups: the check costs a comparison then.
//!
//! The setting is superusers' to set (`postgresql.conf`, `ALTER SYSTEM`, or per database with
//! `ALTER DATABASE … SET`), and every role may read it: it holds names, no secret. Unset, only
//! superusers issue.

use std::cell::{Cell, RefCell};
use std::ffi::{CStr, CString, c_int};

use pgrx::guc::GucSetting;
use pgrx::prelude::*;

use crate::error::raise;

/// `gdid.scopes`, as the DBA wrote it.
pub(crate) static SCOPES: GucSetting<Option<CString>> = GucSetting::<Option<CString>>::new(None);

/// One `scope=role` pair of `gdid.scopes`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Grant {
    /// The scope granted; `None` for `*`, every scope.
    scope: Option<String>,
    /// The role it is granted to, as the catalog spells it.
    role: CString,
}

/// The grants of a `gdid.scopes` value, or what is wrong with it.
pub(crate) fn parse(text: &str) -> Result<Vec<Grant>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|entry| !entry.is_empty())
        .map(|entry| {
            let (scope, role) = entry
                .split_once('=')
                .map(|(scope, role)| (scope.trim(), role.trim()))
                .filter(|(scope, role)| !scope.is_empty() && !role.is_empty())
                .ok_or_else(|| {
                    format!("gdid.scopes: {entry:?} is not scope=role (or *=role for every scope)")
                })?;
            let role = CString::new(role)
                .map_err(|_| format!("gdid.scopes: the role of {entry:?} holds a NUL byte"))?;
            Ok(Grant {
                scope: (scope != "*").then(|| scope.to_owned()),
                role,
            })
        })
        .collect()
}

/// The grants read last, and the text they were read from: parsed again only when it changes.
struct Read {
    text: Vec<u8>,
    grants: Result<Vec<Grant>, String>,
    /// The last call that passed: answered again without a lookup while the role, the scope,
    /// the text and every role and membership are what they were.
    passed: Option<Passed>,
}

/// A call that passed the check: its role, its scope, and the count of [`roles_changed`] then.
struct Passed {
    user: pg_sys::Oid,
    scope: String,
    roles_changed: u64,
}

thread_local! {
    static READ: RefCell<Option<Read>> = const { RefCell::new(None) };
    /// How many times the server told this backend that a role or a membership changed
    /// ([`roles_changed`]); `None` until its callbacks are registered.
    static ROLES_CHANGED: Cell<Option<u64>> = const { Cell::new(None) };
}

/// Counts a change of a role (its superuser flag, its name, a role dropped) or of a membership,
/// as the server's cache invalidation reports it: a passed check is not answered again after one.
unsafe extern "C-unwind" fn roles_changed(_arg: pg_sys::Datum, _cache: c_int, _hash: u32) {
    ROLES_CHANGED.set(ROLES_CHANGED.get().map(|count| count.wrapping_add(1)));
}

/// The server's caches of roles (`pg_authid`) and memberships (`pg_auth_members`).
#[allow(
    clippy::cast_possible_wrap,
    reason = "cache ids are small numbers (11 and 9 on PostgreSQL 15)"
)]
const ROLE_CACHES: [c_int; 2] = [
    pg_sys::SysCacheIdentifier::AUTHOID as c_int,
    pg_sys::SysCacheIdentifier::AUTHMEMROLEMEM as c_int,
];

/// The count of [`roles_changed`], its callbacks registered on the backend's first call.
fn roles_changed_count() -> u64 {
    if let Some(count) = ROLES_CHANGED.get() {
        return count;
    }
    for cache in ROLE_CACHES {
        // SAFETY: registers, once per backend, in its one thread, a callback of the signature
        // the server calls, which touches nothing but a thread-local counter.
        unsafe {
            pg_sys::CacheRegisterSyscacheCallback(
                cache,
                Some(roles_changed),
                pg_sys::Datum::from(0),
            );
        }
    }
    ROLES_CHANGED.set(Some(0));
    0
}

/// Whether `kept` and `now` hold the same bytes, never comparing two empty ones: an empty `Vec`'s
/// pointer is dangling, and glibc's AVX-512 `memcmp` (what `==` calls, even for no bytes) reads
/// it with a masked load whose suppressed fault costs about 170 ns on the machines measured: an
/// unset `gdid.scopes` made every superuser's call 1.8 times slower (`perf` showed `memcmp` in
/// half of a backend's time).
fn same_bytes(kept: &[u8], now: &[u8]) -> bool {
    kept.len() == now.len() && (now.is_empty() || kept == now)
}

/// Raises `insufficient_privilege` unless the role the call runs as may issue from `scope`
/// (see the module's documentation); `sequence` is named in the message.
pub(crate) fn check(scope: &str, sequence: &str) {
    // SAFETY: the backend's one thread reads its own variables: the current user, and the
    // setting's value (a C string the server keeps, or NULL).
    let (user, text) = unsafe {
        let raw = *SCOPES.as_ptr();
        let text = (!raw.is_null()).then(|| CStr::from_ptr(raw).to_bytes());
        (pg_sys::GetUserId(), text.unwrap_or_default())
    };
    let changes = roles_changed_count();
    let allowed = READ.with_borrow_mut(|read| {
        let read = match read {
            Some(read) if same_bytes(&read.text, text) => read,
            _ => read.insert(Read {
                text: text.to_vec(),
                grants: parse(&String::from_utf8_lossy(text)),
                passed: None,
            }),
        };
        if read.passed.as_ref().is_some_and(|passed| {
            passed.user == user
                && passed.roles_changed == changes
                && same_bytes(passed.scope.as_bytes(), scope.as_bytes())
        }) {
            return Ok(true);
        }
        // SAFETY: a catalog lookup of the backend's, in its one thread.
        let allowed = unsafe { pg_sys::superuser_arg(user) }
            || match &read.grants {
                Ok(grants) => grants.iter().any(|grant| {
                    grant
                        .scope
                        .as_deref()
                        .is_none_or(|granted| granted == scope)
                        && holds(user, &grant.role)
                }),
                Err(wrong) => return Err(wrong.clone()),
            };
        read.passed = allowed.then(|| Passed {
            user,
            scope: scope.to_owned(),
            roles_changed: changes,
        });
        Ok(allowed)
    });
    match allowed {
        Ok(true) => {}
        Ok(false) => raise(
            PgSqlErrorCode::ERRCODE_INSUFFICIENT_PRIVILEGE,
            format!(
                "gdid_next('{scope}', '{sequence}'): role {} may not issue from scope {scope:?}: \
                 a superuser grants it by adding {scope}=ROLE (the role, or one it is a member \
                 of) to gdid.scopes",
                role_name(user)
            ),
            None,
        ),
        Err(wrong) => raise(
            PgSqlErrorCode::ERRCODE_INVALID_PARAMETER_VALUE,
            format!("{wrong}: a superuser corrects it, and nothing is issued until then"),
            None,
        ),
    }
}

/// Whether `user` has the privileges of `role` (a role of that name that exists).
fn holds(user: pg_sys::Oid, role: &CStr) -> bool {
    // SAFETY: catalog lookups of the backend's, in its one thread; the name is a C string.
    unsafe {
        let role = pg_sys::get_role_oid(role.as_ptr(), true);
        role != pg_sys::InvalidOid && pg_sys::has_privs_of_role(user, role)
    }
}

/// The name of role `user`, for messages.
fn role_name(user: pg_sys::Oid) -> String {
    // SAFETY: a catalog lookup of the backend's, in its one thread; with `noerr`, NULL for a role
    // that is gone, else a C string in the current memory context.
    unsafe {
        let name = pg_sys::GetUserNameFromId(user, true);
        if name.is_null() {
            format!("oid {}", user.to_u32())
        } else {
            CStr::from_ptr(name).to_string_lossy().into_owned()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Grant, parse};

    fn grant(scope: Option<&str>, role: &str) -> Grant {
        Grant {
            scope: scope.map(str::to_owned),
            role: std::ffi::CString::new(role).unwrap(),
        }
    }

    #[test]
    fn grants_are_scope_role_pairs_and_a_star_is_every_scope() {
        assert_eq!(
            parse(" shop=shop_app,shop = batch ,, *=admin ").unwrap(),
            vec![
                grant(Some("shop"), "shop_app"),
                grant(Some("shop"), "batch"),
                grant(None, "admin")
            ]
        );
        assert_eq!(parse("").unwrap(), vec![]);
    }

    #[test]
    fn an_entry_that_is_not_a_pair_is_named() {
        for (text, entry) in [
            ("shop=app, billing", "\"billing\""),
            ("=app", "\"=app\""),
            ("shop=", "\"shop=\""),
        ] {
            let wrong = parse(text).unwrap_err();
            assert!(wrong.contains(entry), "{text}: {wrong}");
        }
    }
}
