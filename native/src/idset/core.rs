//! The set: 64-bit hashes of ids, in a hashbrown set (a hash is its own hash).

use core::hash::{BuildHasherDefault, Hasher};
use hashbrown::HashSet;

/// The hash of an id: XXH3-64 (seed 0) of its UTF-8 bytes.
#[inline]
pub fn id_hash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// A `Hasher` that passes a `u64` through (the keys are hashes already); the high bits,
/// which hashbrown's control bytes read, are as good as the low ones.
#[derive(Default)]
pub struct PassThrough(u64);

impl Hasher for PassThrough {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 << 8) | b as u64;
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// The hashes seen so far.
#[derive(Default)]
pub struct Hashes {
    set: HashSet<u64, BuildHasherDefault<PassThrough>>,
}

impl Hashes {
    /// Add `hash`; false if it was there already.
    #[inline]
    pub fn insert(&mut self, hash: u64) -> bool {
        self.set.insert(hash)
    }

    /// Add `hashes` in order: -1 when every one was new, else the place of the first one
    /// seen before (the ones before it are added, it and the ones after it are not).
    pub fn insert_all(&mut self, hashes: &[u64]) -> i64 {
        self.set.reserve(hashes.len());
        for (k, &h) in hashes.iter().enumerate() {
            if !self.set.insert(h) {
                return k as i64;
            }
        }
        -1
    }

    pub fn len(&self) -> usize {
        self.set.len()
    }

    pub fn is_empty(&self) -> bool {
        self.set.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeat_is_seen() {
        let mut h = Hashes::default();
        assert!(h.insert(id_hash(b"a")));
        assert!(h.insert(id_hash(b"b")));
        assert!(!h.insert(id_hash(b"a")));
        assert_eq!(h.len(), 2);
        assert_eq!(h.insert_all(&[id_hash(b"c"), id_hash(b"d")]), -1);
        assert_eq!(
            h.insert_all(&[id_hash(b"e"), id_hash(b"b"), id_hash(b"f")]),
            1
        );
        assert_eq!(h.len(), 5);
        assert_eq!(id_hash(b""), 0x2D06800538D394C2);
    }
}
