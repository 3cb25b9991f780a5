//! The trie's records (branches and leaves, in their arenas) and the references between them: what the trie
//! (trie.rs), its key index (key_index.rs) and its checkpoints (checkpoint.rs, snapshot.rs) all read, so none
//! of them needs another's module for the layout.

pub(crate) const NONE: u32 = u32::MAX;
pub(crate) const LEAF: u32 = 1 << 31;

/// Field order is the layout (repr(C)): what an update and a re-hash read comes first, so hashing a branch
/// reads its header and its children's hashes as one run of memory (the children's references, needed
/// only when walking down, come last).
#[repr(C)]
#[derive(Clone)]
pub(crate) struct Branch {
    pub(crate) parent: u32,
    /// Bit i (from the top, as in the preimage) set when child i is present.
    pub(crate) bitmap: u16,
    pub(crate) slot: u8,
    pub(crate) depth: u8,
    pub(crate) dirty: bool,
    pub(crate) live: bool,
    /// Hash of each present child (leaf hash or branch hash), kept up to date by updates and root().
    pub(crate) child_hash: [[u8; 32]; 16],
    pub(crate) hash: [u8; 32],
    /// Child references: NONE, a branch index, or LEAF | leaf index.
    pub(crate) children: [u32; 16],
}

#[derive(Clone)]
pub(crate) struct Leaf {
    pub(crate) key: [u8; 32],
    pub(crate) parent: u32,
    pub(crate) slot: u8,
}

/// Ask for the first `lines` cache lines of a record to be brought into cache (a hint: no effect on results).
#[inline]
pub(crate) fn prefetch<T>(record: &T, lines: usize) {
    #[cfg(target_arch = "x86_64")]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let p = record as *const T as *const i8;
        for line in 0..lines {
            _mm_prefetch(p.add(line * 64), _MM_HINT_T0);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (record, lines);
}

pub(crate) fn new_branch(parent: u32, slot: u8, depth: u8) -> Branch {
    Branch {
        parent,
        bitmap: 0,
        slot,
        depth,
        dirty: false,
        live: true,
        child_hash: [[0; 32]; 16],
        hash: [0; 32],
        children: [NONE; 16],
    }
}
