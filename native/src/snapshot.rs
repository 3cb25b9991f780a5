//! A trie's records as they were when a checkpoint save started (checkpoint.rs): the trie (trie.rs) copies a
//! record here before changing one the writer has not read yet, so the file holds the trie as at the snapshot.

use crate::records::{Branch, Leaf};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard};

/// The trie as it was when a save started, shared by the JS thread (which copies records before changing
/// them) and the writer.
pub(crate) struct Snapshot {
    pub(crate) branches: Side,
    pub(crate) leaves: Side,
    /// Set once the writer no longer reads the trie (finished, failed or aborted).
    detached: AtomicBool,
    state: Mutex<Kept>,
    /// Signalled when the writer detaches (a dropping trie waits for it).
    progress: Condvar,
}

/// One arena's part of a snapshot.
pub(crate) struct Side {
    /// The arena's length at the snapshot: the writer reads records below it.
    pub(crate) len: u32,
    /// Records below this have been read by the writer: the JS thread may change them freely.
    pub(crate) done: AtomicU32,
    /// A bit per record already copied (read and set by the JS thread only): a record changed again costs no lock.
    kept: Vec<AtomicU64>,
}

impl Side {
    fn new(len: usize) -> Side {
        let words = (len as u32).div_ceil(64);
        Side {
            len: len as u32,
            done: AtomicU32::new(0),
            kept: (0..words).map(|_| AtomicU64::new(0)).collect(),
        }
    }

    /// Whether the JS thread must look at record `i` before changing it (marks it as looked at).
    fn needs_copy(&self, i: u32) -> bool {
        if i >= self.len || i < self.done.load(Ordering::Acquire) {
            return false;
        }
        let bit = 1u64 << (i % 64);
        self.kept[i as usize / 64].fetch_or(bit, Ordering::Relaxed) & bit == 0
    }
}

#[derive(Default)]
pub(crate) struct Kept {
    /// Records as they were at the snapshot, copied before the JS thread changed them.
    pub(crate) branches: HashMap<u32, Branch>,
    pub(crate) leaves: HashMap<u32, Leaf>,
    pub(crate) started: bool,
    pub(crate) abort: bool,
    detached: bool,
}

impl Snapshot {
    /// A snapshot of arenas of these lengths, taken now (checkpoint.rs start_save).
    pub(crate) fn new(branch_len: usize, leaf_len: usize) -> Snapshot {
        Snapshot {
            branches: Side::new(branch_len),
            leaves: Side::new(leaf_len),
            detached: AtomicBool::new(false),
            state: Mutex::new(Kept::default()),
            progress: Condvar::new(),
        }
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Kept> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn wait<'a>(&self, kept: MutexGuard<'a, Kept>) -> MutexGuard<'a, Kept> {
        self.progress.wait(kept).unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn is_detached(&self) -> bool {
        self.detached.load(Ordering::Acquire)
    }

    /// Runs `f` (a push that may move an arena) while the writer is not copying records out of it.
    pub(crate) fn while_locked<R>(&self, f: impl FnOnce() -> R) -> R {
        let _held = self.lock();
        f()
    }

    /// Called before branch `i` changes: keeps its snapshot version if the writer still needs it.
    pub(crate) fn keep_branch(&self, i: u32, arena: &[Branch]) {
        if self.branches.needs_copy(i) {
            self.keep(i, &self.branches, |k| &mut k.branches, arena);
        }
    }

    pub(crate) fn keep_leaf(&self, i: u32, arena: &[Leaf]) {
        if self.leaves.needs_copy(i) {
            self.keep(i, &self.leaves, |k| &mut k.leaves, arena);
        }
    }

    #[cold]
    fn keep<T: Clone>(&self, i: u32, side: &Side, copies: fn(&mut Kept) -> &mut HashMap<u32, T>, arena: &[T]) {
        let mut kept = self.lock();
        if !kept.detached && i >= side.done.load(Ordering::Acquire) {
            copies(&mut kept).insert(i, arena[i as usize].clone());
        }
    }

    /// The writer is done with the trie: stop copying, free the copies, wake whoever waits.
    pub(crate) fn detach(&self) {
        let mut kept = self.lock();
        kept.detached = true;
        kept.branches = HashMap::new();
        kept.leaves = HashMap::new();
        self.detached.store(true, Ordering::Release);
        self.progress.notify_all();
    }

    /// The trie is being dropped: the writer must stop reading it. Waits for a chunk in progress.
    pub(crate) fn abort_and_wait(&self) {
        let mut kept = self.lock();
        kept.abort = true;
        while kept.started && !kept.detached {
            kept = self.wait(kept);
        }
    }
}
