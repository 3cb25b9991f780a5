//! The state trie's shape and branch hashing (the JS twin is ts/state/trie.ts; both must give the same
//! root for the same key set). 16-ary radix trie over 32-byte key hashes, each leaf at the shortest
//! prefix unique to it; leaves carry the leaf hash computed by the caller:
//!   leaf hash   = sha256(0x00 || key_hash || value)        (computed in JS, batched)
//!   branch hash = sha256(0x01 || bitmap u16 BE || present children's hashes in nibble order)
//!
//! Layout for cache-friendliness at millions of keys: branches and leaves live in separate arenas; a
//! child reference carries its kind in the top bit; every branch stores its children's hashes inline,
//! so building a preimage reads one contiguous record. Updates push newly dirtied branches on a list per
//! depth, and root() re-hashes those lists deepest level first, each level shared between the calling
//! thread and a helper (share.rs). No sort: sorting the dirty branches by depth read a random branch
//! record per comparison.
//!
//! Every write to a branch or leaf record goes through `branch_mut`/`leaf_mut`/`push_*`: while a checkpoint
//! is being written (checkpoint.rs) they keep the record as it was for the writer first.

use crate::key_index::KeyIndex;
use crate::records::{new_branch, prefetch, Branch, Leaf, LEAF, NONE};
use crate::share;
use crate::snapshot::Snapshot;
use sha2::{Digest, Sha256};
use std::sync::Arc;

pub struct Trie {
    pub(crate) branches: Vec<Branch>,
    pub(crate) leaves: Vec<Leaf>,
    pub(crate) free_branches: Vec<u32>,
    pub(crate) free_leaves: Vec<u32>,
    pub(crate) by_key: KeyIndex,
    /// Branches queued for re-hashing, by depth (a key hash has 64 nibbles: depths 0..64).
    dirty: Vec<Vec<u32>>,
    /// The checkpoint being written from this trie, if any.
    pub(crate) saving: Option<Arc<Snapshot>>,
}

/// Depths a branch can have: one per nibble of a 32-byte key hash.
const DEPTHS: usize = 64;
/// Branches hashed ahead of the one being read: their records are fetched from memory meanwhile
/// (a level's branches are scattered over the arena, so the hardware cannot guess them).
const PREFETCH_AHEAD: usize = 4;

/// Cache lines of a branch a preimage reads (its header and its children's hashes).
const BRANCH_HASH_LINES: usize = std::mem::offset_of!(Branch, hash).div_ceil(64);

/// Hashes per chunk handed out to the hashing threads (a few tens of µs of work).
const CHUNK: usize = 128;

#[inline]
fn nibble(h: &[u8; 32], depth: usize) -> usize {
    let b = h[depth >> 1];
    (if depth & 1 == 1 { b & 15 } else { b >> 4 }) as usize
}

impl Trie {
    pub fn new() -> Trie {
        let mut t = Trie {
            branches: vec![new_branch(NONE, 0, 0)],
            leaves: Vec::new(),
            free_branches: Vec::new(),
            free_leaves: Vec::new(),
            by_key: KeyIndex::default(),
            dirty: vec![Vec::new(); DEPTHS],
            saving: None,
        };
        t.mark(0);
        t
    }

    /// A trie from arenas read back from a checkpoint: every hash is current (nothing dirty).
    pub(crate) fn from_parts(
        branches: Vec<Branch>,
        leaves: Vec<Leaf>,
        free_branches: Vec<u32>,
        free_leaves: Vec<u32>,
        by_key: KeyIndex,
    ) -> Trie {
        Trie {
            branches,
            leaves,
            free_branches,
            free_leaves,
            by_key,
            dirty: vec![Vec::new(); DEPTHS],
            saving: None,
        }
    }

    /// Branch `i` for writing: a checkpoint being written gets its copy of the record first.
    #[inline]
    fn branch_mut(&mut self, i: u32) -> &mut Branch {
        if self.saving.is_some() {
            self.before_write(Some(i), None);
        }
        &mut self.branches[i as usize]
    }

    #[inline]
    fn leaf_mut(&mut self, i: u32) -> &mut Leaf {
        if self.saving.is_some() {
            self.before_write(None, Some(i));
        }
        &mut self.leaves[i as usize]
    }

    #[cold]
    fn before_write(&mut self, branch: Option<u32>, leaf: Option<u32>) {
        let Some(snap) = self.saving.as_ref() else { return };
        if snap.is_detached() {
            self.saving = None;
            return;
        }
        if let Some(i) = branch {
            snap.keep_branch(i, &self.branches);
        }
        if let Some(i) = leaf {
            snap.keep_leaf(i, &self.leaves);
        }
    }

    fn push_branch(&mut self, b: Branch) -> u32 {
        push_record(&mut self.branches, self.saving.as_deref(), b)
    }

    fn push_leaf(&mut self, l: Leaf) -> u32 {
        push_record(&mut self.leaves, self.saving.as_deref(), l)
    }

    pub fn len(&self) -> usize {
        self.by_key.len()
    }

    fn alloc_branch(&mut self, b: Branch) -> u32 {
        if let Some(i) = self.free_branches.pop() {
            *self.branch_mut(i) = b;
            i
        } else {
            self.push_branch(b)
        }
    }

    fn alloc_leaf(&mut self, l: Leaf) -> u32 {
        if let Some(i) = self.free_leaves.pop() {
            *self.leaf_mut(i) = l;
            i
        } else {
            self.push_leaf(l)
        }
    }

    /// Mark one branch dirty (queued for re-hashing once).
    #[inline]
    fn mark(&mut self, b: u32) {
        if self.branches[b as usize].dirty {
            return;
        }
        let br = self.branch_mut(b);
        br.dirty = true;
        let depth = br.depth as usize;
        self.dirty[depth].push(b);
    }

    /// Mark branch `b` and its ancestors dirty (stops at the first dirty one: its ancestors are too).
    fn dirty_up(&mut self, mut b: u32) {
        while b != NONE && !self.branches[b as usize].dirty {
            self.mark(b);
            b = self.branches[b as usize].parent;
        }
    }

    /// Point parent's slot at child (a branch or LEAF|leaf) with the given hash, fixing the back-link.
    fn link(&mut self, parent: u32, slot: usize, child: u32, hash: [u8; 32]) {
        let p = self.branch_mut(parent);
        p.children[slot] = child;
        p.child_hash[slot] = hash;
        let bit = 1u16 << (15 - slot);
        if child == NONE {
            p.bitmap &= !bit;
            return;
        }
        p.bitmap |= bit;
        if child & LEAF != 0 {
            let l = self.leaf_mut(child & !LEAF);
            l.parent = parent;
            l.slot = slot as u8;
        } else {
            let depth = self.branches[parent as usize].depth + 1;
            let c = self.branch_mut(child);
            c.parent = parent;
            c.slot = slot as u8;
            c.depth = depth;
        }
    }

    pub fn set(&mut self, key: &[u8; 32], leaf_hash: &[u8; 32]) {
        if let Some(li) = self.by_key.get(key, &self.leaves) {
            let (parent, slot) = {
                let l = &self.leaves[li as usize];
                (l.parent, l.slot as usize)
            };
            self.branch_mut(parent).child_hash[slot] = *leaf_hash;
            self.dirty_up(parent);
            return;
        }
        let mut node = 0u32;
        let mut depth = 0usize;
        loop {
            self.mark(node);
            let n = nibble(key, depth);
            let c = self.branches[node as usize].children[n];
            if c == NONE {
                let li = self.alloc_leaf(Leaf {
                    key: *key,
                    parent: node,
                    slot: n as u8,
                });
                self.link(node, n, LEAF | li, *leaf_hash);
                self.by_key.insert(key, li, &self.leaves);
                return;
            }
            if c & LEAF == 0 {
                node = c;
                depth += 1;
                continue;
            }
            // Two leaves share this prefix: push the existing one a level down and retry there.
            let other_key = self.leaves[(c & !LEAF) as usize].key;
            let other_hash = self.branches[node as usize].child_hash[n];
            let split = self.alloc_branch(new_branch(node, n as u8, (depth + 1) as u8));
            self.link(split, nibble(&other_key, depth + 1), c, other_hash);
            self.link(node, n, split, [0; 32]);
            node = split;
            depth += 1;
        }
    }

    pub fn delete(&mut self, key: &[u8; 32]) -> bool {
        let Some(li) = self.by_key.remove(key, &self.leaves) else {
            return false;
        };
        let (mut branch, slot) = {
            let l = &self.leaves[li as usize];
            (l.parent, l.slot as usize)
        };
        self.free_leaves.push(li);
        self.link(branch, slot, NONE, [0; 32]);
        self.dirty_up(branch);
        // Collapse upward so the shape stays canonical (the root never collapses).
        while branch != 0 {
            let b = &self.branches[branch as usize];
            let (parent, bslot) = (b.parent, b.slot as usize);
            let mut count = 0;
            let mut only = (NONE, [0u8; 32]);
            for i in 0..16 {
                if b.children[i] != NONE {
                    count += 1;
                    only = (b.children[i], b.child_hash[i]);
                }
            }
            if count == 0 {
                self.link(parent, bslot, NONE, [0; 32]);
            } else if count == 1 && only.0 & LEAF != 0 {
                self.link(parent, bslot, only.0, only.1);
            } else {
                break;
            }
            self.branch_mut(branch).live = false;
            self.free_branches.push(branch);
            branch = parent;
        }
        true
    }

    fn preimage(b: &Branch, out: &mut Vec<u8>) {
        out.clear();
        out.push(1);
        out.extend_from_slice(&b.bitmap.to_be_bytes());
        let mut bits = b.bitmap;
        while bits != 0 {
            let i = bits.leading_zeros() as usize;
            out.extend_from_slice(&b.child_hash[i]);
            bits &= !(1u16 << (15 - i));
        }
    }

    /// Set or delete many keys: `keys[i]` is a state key (hashed here), `values[i]` its new value or None
    /// to delete it. Key and leaf hashes are computed in parallel, then applied in order (a key given twice
    /// ends with its last value). Leaf hash = sha256(0x00 || sha256(key) || value).
    pub fn update(&mut self, keys: &[&[u8]], values: &[Option<&[u8]>]) {
        let hash_one = |i: usize| {
            let kh = crate::hash::sha256(keys[i]);
            let lh = values[i].map(|v| {
                let mut h = [0u8; 32];
                h.copy_from_slice(&Sha256::new().chain_update([0u8]).chain_update(kh).chain_update(v).finalize());
                h
            });
            (kh, lh)
        };
        let mut hashes: Vec<([u8; 32], Option<[u8; 32]>)> = vec![([0; 32], None); keys.len()];
        share::for_each_chunk_mut(&mut hashes, CHUNK, |c, out| {
            for (j, slot) in out.iter_mut().enumerate() {
                *slot = hash_one(c * CHUNK + j);
            }
        });
        // Look every key up once first and fetch its leaf: the lookups do not depend on each other, so the
        // CPU overlaps their cache misses; the updates below (in order, each depending on the last) then
        // find the map entries and leaves in cache and fetch the parent branch a few keys ahead.
        let found: Vec<u32> = hashes
            .iter()
            .map(|(kh, _)| match self.by_key.get(kh, &self.leaves) {
                Some(li) => {
                    prefetch(&self.leaves[li as usize], 1);
                    li
                }
                None => NONE,
            })
            .collect();
        for (i, (kh, lh)) in hashes.iter().enumerate() {
            if let Some(&li) = found.get(i + PREFETCH_AHEAD) {
                // A hint only: the leaf may have moved since (earlier updates of this batch), set() looks again.
                if let Some((parent, slot)) = self.leaves.get(li as usize).map(|l| (l.parent, l.slot as usize)) {
                    if let Some(b) = self.branches.get(parent as usize) {
                        prefetch(b, 1);
                        prefetch(&b.child_hash[slot & 15], 1);
                    }
                }
            }
            match lh {
                Some(h) => self.set(kh, h),
                None => {
                    self.delete(kh);
                }
            }
        }
    }

    /// Re-hash the dirty branches, deepest level first, each level in parallel.
    pub fn root(&mut self) -> [u8; 32] {
        for depth in (0..DEPTHS).rev() {
            if self.dirty[depth].is_empty() {
                continue;
            }
            let mut level = std::mem::take(&mut self.dirty[depth]);
            // Each branch once, and only at its own depth: a branch freed and reused elsewhere while
            // queued is queued again where it now is (or not at all when it is free).
            let mut kept = 0;
            for k in 0..level.len() {
                let b = level[k];
                let br = &self.branches[b as usize];
                if br.live && br.dirty && br.depth as usize == depth {
                    self.branch_mut(b).dirty = false;
                    level[kept] = b;
                    kept += 1;
                }
            }
            level.truncate(kept);
            let this = &*self;
            let hash_one = |buf: &mut Vec<u8>, b: &u32| {
                Self::preimage(&this.branches[*b as usize], buf);
                let mut h = [0u8; 32];
                h.copy_from_slice(&Sha256::digest(&buf[..]));
                h
            };
            let mut hashes = vec![[0u8; 32]; level.len()];
            share::for_each_chunk_mut(&mut hashes, CHUNK, |c, out| {
                let mut buf = Vec::with_capacity(3 + 16 * 32);
                for (j, h) in out.iter_mut().enumerate() {
                    let i = c * CHUNK + j;
                    if let Some(&ahead) = level.get(i + PREFETCH_AHEAD) {
                        prefetch(&this.branches[ahead as usize], BRANCH_HASH_LINES);
                    }
                    *h = hash_one(&mut buf, &level[i]);
                }
            });
            for (&b, h) in level.iter().zip(hashes) {
                let (parent, slot) = {
                    let br = self.branch_mut(b);
                    br.hash = h;
                    (br.parent, br.slot as usize)
                };
                if parent != NONE {
                    self.branch_mut(parent).child_hash[slot] = h;
                }
            }
            level.clear();
            self.dirty[depth] = level; // keeps the allocation for the next block
        }
        self.branches[0].hash
    }

    /// Membership proof steps from the root down: per level bitmap u16 BE, nibble u8, sibling count u8,
    /// then the siblings' hashes. None when the key is absent. Call root() first.
    pub fn prove(&self, key: &[u8; 32]) -> Option<Vec<u8>> {
        let li = self.by_key.get(key, &self.leaves)?;
        let mut steps: Vec<Vec<u8>> = Vec::new();
        let (mut parent, mut slot) = {
            let l = &self.leaves[li as usize];
            (l.parent, l.slot)
        };
        while parent != NONE {
            let b = &self.branches[parent as usize];
            let mut step = vec![0u8, 0, slot, 0];
            let mut bitmap: u16 = 0;
            let mut count = 0u8;
            for i in 0..16 {
                if b.children[i] == NONE {
                    continue;
                }
                bitmap |= 1 << (15 - i);
                if i != slot as usize {
                    step.extend_from_slice(&b.child_hash[i]);
                    count += 1;
                }
            }
            step[0..2].copy_from_slice(&bitmap.to_be_bytes());
            step[3] = count;
            steps.push(step);
            slot = b.slot;
            parent = b.parent;
        }
        steps.reverse();
        Some(steps.concat())
    }
}

/// Push a record onto an arena and return its index. While a checkpoint is written the writer reads the arena
/// through its address: a push that reallocates must not move it then, so it waits for the writer's lock.
fn push_record<T>(arena: &mut Vec<T>, saving: Option<&Snapshot>, record: T) -> u32 {
    match saving {
        Some(snap) if arena.len() == arena.capacity() && !snap.is_detached() => snap.while_locked(|| arena.push(record)),
        _ => arena.push(record),
    }
    (arena.len() - 1) as u32
}

impl Drop for Trie {
    fn drop(&mut self) {
        if let Some(snap) = self.saving.take() {
            snap.abort_and_wait();
        }
    }
}
