//! [`arbitrary::Arbitrary`] for [`Gdid`]: any 12 bytes are an id (every era, authority and
//! counter), so a fuzzer's bytes map onto ids one to one, in the id's own byte order.

use arbitrary::{Arbitrary, Result, Unstructured};

use crate::Gdid;

impl<'a> Arbitrary<'a> for Gdid {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        <[u8; Gdid::SIZE]>::arbitrary(u).map(Gdid::from_bytes)
    }

    fn size_hint(depth: usize) -> (usize, Option<usize>) {
        <[u8; Gdid::SIZE]>::size_hint(depth)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn twelve_bytes_are_one_id_in_byte_order() {
        let bytes = [0, 0, 5, 13, 0x30, 0, 0, 0, 0, 0, 0, 57];
        let id = Gdid::arbitrary(&mut Unstructured::new(&bytes)).unwrap();
        assert_eq!(id, "1293:3:57".parse().unwrap());
        assert_eq!(Gdid::size_hint(0), (Gdid::SIZE, Some(Gdid::SIZE)));
    }
}
