//! The trie's key hash -> leaf index map, 8 bytes a slot. A std HashMap<[u8; 32], u32> kept a copy of every
//! 32-byte key hash (already in its leaf) in 36-byte buckets: ~62-77 bytes a key. Here a slot holds the leaf
//! index and 32 bits of the key's bucket hash; a lookup compares the hash bits first and then the key in the
//! leaf (which an update reads next anyway). Open addressing with linear probing, at most 3/4 full, removal
//! by shifting later entries back (no tombstones). Growing re-places slots by their stored hash bits alone.
//!
//! Key hashes are sha256 of keys an attacker chooses and can grind, so the bucket hash is keyed with
//! per-process random secrets (folded 64x64->128 multiply, as foldhash/wyhash do): cheap, and unpredictable
//! without the secrets.

use crate::records::{prefetch, Leaf};

const EMPTY: u64 = u64::MAX;
const MIN_SLOTS: usize = 16;

pub(crate) struct KeyIndex {
    slots: Vec<u64>,
    len: usize,
}

/// Two random 64-bit secrets per process, drawn once from std's OS-seeded RandomState.
fn seeds() -> (u64, u64) {
    use std::collections::hash_map::RandomState;
    use std::hash::BuildHasher;
    use std::sync::OnceLock;
    static SEEDS: OnceLock<(u64, u64)> = OnceLock::new();
    *SEEDS.get_or_init(|| {
        let s = RandomState::new();
        (s.hash_one(0x9e37_79b9_7f4a_7c15u64), s.hash_one(0xc2b2_ae3d_27d4_eb4fu64))
    })
}

#[inline]
fn bucket_hash(key: &[u8; 32]) -> u32 {
    let (k0, k1) = seeds();
    let x = u64::from_le_bytes([key[0], key[1], key[2], key[3], key[4], key[5], key[6], key[7]]);
    let p = ((x ^ k0) as u128) * ((k1 | 1) as u128);
    let h = (p as u64) ^ ((p >> 64) as u64);
    (h ^ (h >> 32)) as u32
}

#[inline]
fn slot_of(hash: u32, leaf: u32) -> u64 {
    ((hash as u64) << 32) | leaf as u64
}

impl KeyIndex {
    pub(crate) fn with_capacity(keys: usize) -> KeyIndex {
        let slots = (keys + keys / 3 + 1).next_power_of_two().max(MIN_SLOTS);
        KeyIndex {
            slots: vec![EMPTY; slots],
            len: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    fn mask(&self) -> usize {
        self.slots.len() - 1
    }

    /// Ok(slot holding `key`) or Err(the empty slot where it would go).
    #[inline]
    fn probe(&self, key: &[u8; 32], h: u32, leaves: &[Leaf]) -> Result<usize, usize> {
        let mask = self.mask();
        let mut i = h as usize & mask;
        loop {
            let s = self.slots[i];
            if s == EMPTY {
                return Err(i);
            }
            if (s >> 32) as u32 == h && leaves.get(s as u32 as usize).is_some_and(|l| l.key == *key) {
                return Ok(i);
            }
            i = (i + 1) & mask;
        }
    }

    /// Asks for the cache line where `key`'s probe starts (a hint: a batch of inserts overlaps its misses).
    #[inline]
    pub(crate) fn prefetch(&self, key: &[u8; 32]) {
        prefetch(&self.slots[bucket_hash(key) as usize & self.mask()], 1);
    }

    #[inline]
    pub(crate) fn get(&self, key: &[u8; 32], leaves: &[Leaf]) -> Option<u32> {
        self.probe(key, bucket_hash(key), leaves).ok().map(|i| self.slots[i] as u32)
    }

    /// Adds `key` -> `leaf` (`leaves[leaf]` holds the key); false, with nothing changed, if the key is present.
    pub(crate) fn insert(&mut self, key: &[u8; 32], leaf: u32, leaves: &[Leaf]) -> bool {
        if (self.len + 1) * 4 > self.slots.len() * 3 {
            self.grow();
        }
        let h = bucket_hash(key);
        match self.probe(key, h, leaves) {
            Ok(_) => false,
            Err(i) => {
                self.slots[i] = slot_of(h, leaf);
                self.len += 1;
                true
            }
        }
    }

    fn place(&mut self, slot: u64) {
        let mask = self.mask();
        let mut i = (slot >> 32) as usize & mask;
        while self.slots[i] != EMPTY {
            i = (i + 1) & mask;
        }
        self.slots[i] = slot;
    }

    fn grow(&mut self) {
        let bigger = vec![EMPTY; self.slots.len() * 2];
        let old = std::mem::replace(&mut self.slots, bigger);
        for s in old.into_iter().filter(|&s| s != EMPTY) {
            self.place(s);
        }
    }

    /// Removes `key`, returning its leaf index.
    pub(crate) fn remove(&mut self, key: &[u8; 32], leaves: &[Leaf]) -> Option<u32> {
        let at = self.probe(key, bucket_hash(key), leaves).ok()?;
        let leaf = self.slots[at] as u32;
        self.len -= 1;
        // Shift back the entries after the hole that may move there (their home is not in (hole, j]).
        let mask = self.mask();
        let (mut hole, mut j) = (at, at);
        loop {
            j = (j + 1) & mask;
            let s = self.slots[j];
            if s == EMPTY {
                break;
            }
            let home = (s >> 32) as usize & mask;
            if (j.wrapping_sub(home) & mask) >= (j.wrapping_sub(hole) & mask) {
                self.slots[hole] = s;
                hole = j;
            }
        }
        self.slots[hole] = EMPTY;
        Some(leaf)
    }
}

impl Default for KeyIndex {
    fn default() -> Self {
        KeyIndex::with_capacity(0)
    }
}
