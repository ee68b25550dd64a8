//! The conformance suite on the in-memory authority (`gdid_engine::MemoryAuthority`):
//! the cases that need no stored counter written behind the authority's back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use gdid_engine::MemoryAuthority;
use gdid_testkit::conformance::StoreUnderTest;

/// In-memory authorities, one per number, shared by every "connection".
#[derive(Debug, Default)]
struct Memory {
    authorities: Mutex<HashMap<u8, Arc<MemoryAuthority>>>,
}

impl StoreUnderTest for Memory {
    type Authority = Arc<MemoryAuthority>;
    type Place = Arc<MemoryAuthority>;

    fn store(&self) -> &str {
        "memory"
    }

    async fn place(&self, number: u8) -> Arc<MemoryAuthority> {
        let mut authorities = self.authorities.lock().unwrap();
        let authority = authorities
            .entry(number)
            .or_insert_with(|| Arc::new(MemoryAuthority::new(number)));
        Arc::clone(authority)
    }

    async fn connect(&self, place: &Arc<MemoryAuthority>, number: u8) -> Arc<MemoryAuthority> {
        assert_eq!(gdid_engine::Authority::number(&**place), number);
        Arc::clone(place)
    }
}

impl Memory {
    /// The backend, tallied as the store `memory` (see `gdid_testkit::ran`).
    fn open() -> Option<Memory> {
        gdid_testkit::ran("memory");
        Some(Memory::default())
    }
}

gdid_testkit::conformance!(memory { authority => Memory::open() });
