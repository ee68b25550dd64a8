//! The conformance suite on the in-memory store (`gdid_engine::MemoryStore`, whose authority,
//! `MemoryAuthority`, is a `CounterStore` like every database's): every group that runs on a
//! store of counters, its records written behind the authority's back as a test writes a
//! database's rows.

use std::collections::HashMap;
use std::sync::Mutex;

use gdid_engine::backend::numbering::claim;
use gdid_engine::backend::{CounterKey, CounterStore, StoredInt};
use gdid_engine::{Authority, MemoryAuthority, MemoryStore};
use gdid_testkit::conformance::{Counters, StoreUnderTest};

/// Memory stores, one per authority number, shared by every "connection".
#[derive(Debug, Default)]
struct Memory {
    stores: Mutex<HashMap<u8, MemoryStore>>,
}

impl StoreUnderTest for Memory {
    type Authority = MemoryAuthority;
    type Place = MemoryStore;

    fn store(&self) -> &str {
        "memory"
    }

    async fn place(&self, number: u8) -> MemoryStore {
        let mut stores = self.stores.lock().unwrap();
        stores.entry(number).or_default().clone()
    }

    async fn connect(&self, place: &MemoryStore, number: u8) -> MemoryAuthority {
        MemoryAuthority::on(place, number)
    }
}

/// The record of (`scope`, `sequence`) of `authority`'s number.
fn key_of<'a>(authority: &MemoryAuthority, scope: &'a str, sequence: &'a str) -> CounterKey<'a> {
    CounterKey::new(Authority::number(authority), scope, sequence)
}

impl Counters for Memory {
    async fn set_counter(
        &self,
        authority: &MemoryAuthority,
        scope: &str,
        sequence: &str,
        era: i64,
        next: i64,
    ) {
        let values = [StoredInt::Integer(era), StoredInt::Integer(next)];
        authority
            .store()
            .write(&key_of(authority, scope, sequence), values);
    }

    fn counter_corruptions(&self) -> Vec<&'static str> {
        // A memory record holds what a store's driver reads: any integer, another type, nothing.
        vec![
            "negative-next",
            "above-range",
            "negative-era",
            "text-next",
            "missing-era",
        ]
    }

    async fn corrupt_counter(
        &self,
        authority: &MemoryAuthority,
        scope: &str,
        sequence: &str,
        case: &str,
    ) -> Vec<String> {
        let key = key_of(authority, scope, sequence);
        let Some([mut era, mut next]) = authority.read(&key).await.unwrap() else {
            panic!("no record of {scope}/{sequence} to corrupt");
        };
        let field = match case {
            "negative-next" => {
                next = StoredInt::Integer(-1);
                "next"
            }
            "above-range" => {
                next = StoredInt::Integer(1 << 62);
                "next"
            }
            "negative-era" => {
                era = StoredInt::Integer(-1);
                "era"
            }
            "text-next" => {
                next = StoredInt::Other("text 'abc'".into());
                "next"
            }
            "missing-era" => {
                era = StoredInt::Missing;
                "era"
            }
            other => panic!("no such corruption: {other}"),
        };
        authority.store().write(&key, [era, next]);
        vec![format!("sequence {sequence:?}"), format!("field {field} ")]
    }

    async fn counter_text(
        &self,
        authority: &MemoryAuthority,
        scope: &str,
        sequence: &str,
    ) -> String {
        let stored = authority.read(&key_of(authority, scope, sequence)).await;
        format!("{:?}", stored.unwrap())
    }

    async fn empty_place(&self) -> MemoryStore {
        MemoryStore::new()
    }

    async fn open(&self, place: &MemoryStore) -> MemoryAuthority {
        let number = claim(place, None).await.unwrap();
        MemoryAuthority::on(place, number)
    }

    async fn unchecked(&self, place: &MemoryStore, number: u8) -> MemoryAuthority {
        MemoryAuthority::on(place, number)
    }

    async fn counters_of(&self, authority: &MemoryAuthority, number: u8) -> u64 {
        let records = authority.records().await.unwrap();
        let of_number = StoredInt::Integer(i64::from(number));
        records.iter().filter(|r| r.key == of_number).count() as u64
    }

    async fn forget_number(&self, authority: &MemoryAuthority, number: u8) {
        let store = authority.store();
        store.forget_number();
        for record in authority.records().await.unwrap() {
            let StoredInt::Integer(key) = record.key else {
                panic!("a record without a key: {record:?}");
            };
            let key = u8::try_from(key).unwrap();
            let (scope, sequence) = (&record.scope, &record.sequence);
            let values = store.remove(&CounterKey::new(key, scope, sequence));
            let values = values.unwrap_or_else(|| panic!("no record of {scope}/{sequence}"));
            store.write(&CounterKey::new(number, scope, sequence), values);
        }
    }

    async fn insert_counter(
        &self,
        authority: &MemoryAuthority,
        number: u8,
        scope: &str,
        sequence: &str,
        next: i64,
    ) {
        let values = [StoredInt::Integer(0), StoredInt::Integer(next)];
        authority
            .store()
            .write(&CounterKey::new(number, scope, sequence), values);
    }
}

impl Memory {
    /// The backend, tallied as the store `memory` (see `gdid_testkit::ran`).
    fn open() -> Option<Memory> {
        gdid_testkit::ran("memory");
        Some(Memory::default())
    }
}

gdid_testkit::conformance!(memory {
    authority, counters, counter, numbers, sequences => Memory::open();
});
