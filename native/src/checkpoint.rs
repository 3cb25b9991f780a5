//! Trie checkpoints: the arenas (branches with their hashes, leaves) written to a file and read back, so a
//! restart does not rebuild the trie from every state value.
//!
//! Saving never stops updates for long. `start_save` (JS thread) re-hashes what is dirty, copies the free
//! lists and remembers the arenas' lengths: that is the snapshot. A thread then reads the records in index
//! order, a chunk at a time under a lock. Meanwhile the JS thread may keep updating: before it writes a
//! record the writer has not reached yet, it copies the record for the writer (copy-on-write, one record at
//! a time: `Trie::branch_mut`/`leaf_mut`), so the file holds the trie exactly as at the snapshot. The cost
//! during a save: a lock per first write of a record, a ~620-byte copy per branch changed ahead of the writer,
//! and a wait of at most one chunk (~1 ms) when the writer holds the lock. Records keep their indexes (free
//! ones included), so a loaded trie is the saved one, down to which record the next insert reuses.
//!
//! File layout (little-endian), checksum = SHA-256(meta || body || header[..80]):
//!   header (112 bytes): magic "NTRIECKP", version u32, branch records u32, leaf records u32,
//!     free branches u32, free leaves u32, keys u32, meta length u32, reserved u32, file length u64,
//!     root [32], checksum [32]
//!   meta (the caller's bytes)
//!   body: free branch indexes u32*, free leaf indexes u32*, then per branch record 0 (free) or
//!     1, parent u32, slot u8, depth u8, bitmap u16, hash [32], per present child (nibble order)
//!     reference u32 and hash [32]; then per leaf record key hash [32], parent u32, slot u8.
//! The file is written as `<path>.tmp`, fsynced, renamed over `<path>`, and the directory fsynced.

mod load;
pub(crate) use load::load;

use crate::trie::{Branch, Leaf, Trie};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

const MAGIC: &[u8; 8] = b"NTRIECKP";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 112;
const CHECKSUM_AT: usize = 80;
/// Records the writer reads per lock hold: a few hundred µs of copying, the longest an update waits.
const BRANCH_CHUNK: u32 = 2048;
const LEAF_CHUNK: u32 = 16384;
/// A checkpoint's meta is a small caller record (height, root...): anything larger is a corrupt header.
const MAX_META: u32 = 1 << 20;
const IO_BUFFER: usize = 1 << 20;
/// Bytes of a leaf record: key hash, parent, slot.
const LEAF_RECORD: u64 = 37;

/// The trie as it was when a save started, shared by the JS thread (which copies records before changing
/// them) and the writer.
pub(crate) struct Snapshot {
    branch_len: u32,
    leaf_len: u32,
    /// Records below these indexes have been read by the writer: the JS thread may change them freely.
    branches_done: AtomicU32,
    leaves_done: AtomicU32,
    /// Set once the writer no longer reads the trie (finished, failed or aborted).
    detached: AtomicBool,
    /// A bit per record already copied into `state` (read and set by the JS thread only): a record changed
    /// again costs no lock.
    branches_kept: Vec<AtomicU64>,
    leaves_kept: Vec<AtomicU64>,
    state: Mutex<Kept>,
    released: Condvar,
}

#[derive(Default)]
struct Kept {
    /// Records as they were at the snapshot, copied before the JS thread changed them.
    branches: HashMap<u32, Branch>,
    leaves: HashMap<u32, Leaf>,
    started: bool,
    abort: bool,
    detached: bool,
}

impl Snapshot {
    fn lock(&self) -> MutexGuard<'_, Kept> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn is_detached(&self) -> bool {
        self.detached.load(Ordering::Acquire)
    }

    /// Runs `f` (a push that may move an arena) while the writer cannot be reading.
    pub(crate) fn while_locked<R>(&self, f: impl FnOnce() -> R) -> R {
        let _held = self.lock();
        f()
    }

    /// Called before branch `i` changes: keeps its snapshot version if the writer still needs it.
    pub(crate) fn keep_branch(&self, i: u32, arena: &[Branch]) {
        if i >= self.branch_len || i < self.branches_done.load(Ordering::Acquire) || already_kept(&self.branches_kept, i) {
            return;
        }
        let mut kept = self.lock();
        if !kept.detached && i >= self.branches_done.load(Ordering::Acquire) {
            kept.branches.insert(i, arena[i as usize].clone());
        }
    }

    pub(crate) fn keep_leaf(&self, i: u32, arena: &[Leaf]) {
        if i >= self.leaf_len || i < self.leaves_done.load(Ordering::Acquire) || already_kept(&self.leaves_kept, i) {
            return;
        }
        let mut kept = self.lock();
        if !kept.detached && i >= self.leaves_done.load(Ordering::Acquire) {
            kept.leaves.insert(i, arena[i as usize].clone());
        }
    }

    /// The writer is done with the trie: stop copying, free the copies, wake a dropping trie.
    fn detach(&self) {
        let mut kept = self.lock();
        kept.detached = true;
        kept.branches = HashMap::new();
        kept.leaves = HashMap::new();
        self.detached.store(true, Ordering::Release);
        self.released.notify_all();
    }

    /// The trie is being dropped: the writer must stop reading it. Waits for a chunk in progress.
    fn abort_and_wait(&self) {
        let mut kept = self.lock();
        kept.abort = true;
        while kept.started && !kept.detached {
            kept = self.released.wait(kept).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// Marks record `i` as kept; true when it already was (then it must not be copied again: it has changed since).
fn already_kept(bits: &[AtomicU64], i: u32) -> bool {
    let bit = 1u64 << (i % 64);
    bits[i as usize / 64].fetch_or(bit, Ordering::Relaxed) & bit != 0
}

fn bitset(len: u32) -> Vec<AtomicU64> {
    (0..len.div_ceil(64)).map(|_| AtomicU64::new(0)).collect()
}

impl Drop for Trie {
    fn drop(&mut self) {
        if let Some(snap) = self.saving.take() {
            snap.abort_and_wait();
        }
    }
}

/// The trie's address for the writer thread; valid until the snapshot is detached (Trie::drop waits).
struct TriePtr(*const Trie);
unsafe impl Send for TriePtr {}

/// One save: built on the JS thread by `start_save`, run on a worker thread by `run`.
pub(crate) struct SaveJob {
    snap: Arc<Snapshot>,
    trie: TriePtr,
    path: PathBuf,
    meta: Vec<u8>,
    root: [u8; 32],
    free_branches: Vec<u32>,
    free_leaves: Vec<u32>,
    keys: u32,
    pub(crate) result: Result<(), String>,
}

impl Drop for SaveJob {
    fn drop(&mut self) {
        // Whatever happened (done, failed, never run), the trie stops keeping records for this save.
        self.snap.detach();
    }
}

/// Takes the snapshot (JS thread). Err when a save of this trie is still running.
pub(crate) fn start_save(t: &mut Trie, path: PathBuf, meta: Vec<u8>) -> Result<SaveJob, &'static str> {
    if t.saving.as_ref().is_some_and(|s| !s.is_detached()) {
        return Err("a checkpoint of this trie is already being written");
    }
    if meta.len() > MAX_META as usize {
        return Err("checkpoint meta is limited to 1 MiB");
    }
    let root = t.root();
    let snap = Arc::new(Snapshot {
        branch_len: t.branches.len() as u32,
        leaf_len: t.leaves.len() as u32,
        branches_done: AtomicU32::new(0),
        leaves_done: AtomicU32::new(0),
        detached: AtomicBool::new(false),
        branches_kept: bitset(t.branches.len() as u32),
        leaves_kept: bitset(t.leaves.len() as u32),
        state: Mutex::new(Kept::default()),
        released: Condvar::new(),
    });
    t.saving = Some(snap.clone());
    Ok(SaveJob {
        snap,
        trie: TriePtr(t as *const Trie),
        path,
        meta,
        root,
        free_branches: t.free_branches.clone(),
        free_leaves: t.free_leaves.clone(),
        keys: t.len() as u32,
        result: Err("the checkpoint writer did not run to the end".into()),
    })
}

fn temp_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".tmp");
    PathBuf::from(p)
}

impl SaveJob {
    /// Writes the file (worker thread); the outcome is left in `result`.
    pub(crate) fn run(&mut self) {
        let tmp = temp_path(&self.path);
        self.result = self.write_to(&tmp).and_then(|()| publish(&tmp, &self.path));
        if self.result.is_err() {
            let _ = fs::remove_file(&tmp);
        }
    }

    fn write_to(&self, tmp: &Path) -> Result<(), String> {
        let io = |e: std::io::Error| format!("writing {}: {e}", tmp.display());
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(tmp)
            .map_err(io)?;
        let mut out = Output {
            w: BufWriter::with_capacity(IO_BUFFER, &file),
            hasher: Sha256::new(),
            len: 0,
        };
        out.w.write_all(&[0u8; HEADER_LEN]).map_err(io)?; // the header goes in last
        out.len += HEADER_LEN as u64;
        out.put(&self.meta).map_err(io)?;
        let mut buf = Vec::with_capacity(IO_BUFFER);
        for list in [&self.free_branches, &self.free_leaves] {
            for chunk in list.chunks(IO_BUFFER / 4) {
                buf.clear();
                chunk.iter().for_each(|i| buf.extend_from_slice(&i.to_le_bytes()));
                out.put(&buf).map_err(io)?;
            }
        }
        self.begin()?;
        let mut from = 0;
        while from < self.snap.branch_len {
            let to = (from + BRANCH_CHUNK).min(self.snap.branch_len);
            self.read_branches(from, to, &mut buf)?;
            out.put(&buf).map_err(io)?;
            from = to;
        }
        from = 0;
        while from < self.snap.leaf_len {
            let to = (from + LEAF_CHUNK).min(self.snap.leaf_len);
            self.read_leaves(from, to, &mut buf)?;
            out.put(&buf).map_err(io)?;
            from = to;
        }
        self.snap.detach();
        let header = self.header(out.len);
        let Output { mut w, mut hasher, .. } = out;
        hasher.update(&header[..CHECKSUM_AT]);
        let checksum = hasher.finalize();
        w.flush().map_err(io)?;
        drop(w);
        let mut f = &file;
        f.seek(SeekFrom::Start(0)).map_err(io)?;
        f.write_all(&header[..CHECKSUM_AT]).map_err(io)?;
        f.write_all(&checksum).map_err(io)?;
        file.sync_all().map_err(io)
    }

    fn header(&self, file_len: u64) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(MAGIC);
        let fields = [
            VERSION,
            self.snap.branch_len,
            self.snap.leaf_len,
            self.free_branches.len() as u32,
            self.free_leaves.len() as u32,
            self.keys,
            self.meta.len() as u32,
            0,
        ];
        for (k, v) in fields.iter().enumerate() {
            h[8 + 4 * k..12 + 4 * k].copy_from_slice(&v.to_le_bytes());
        }
        h[40..48].copy_from_slice(&file_len.to_le_bytes());
        h[48..80].copy_from_slice(&self.root);
        h
    }

    fn begin(&self) -> Result<(), String> {
        let mut kept = self.snap.lock();
        if kept.abort {
            return Err("the trie was dropped before its checkpoint was written".into());
        }
        kept.started = true;
        Ok(())
    }

    /// Encodes branch records [from, to) as of the snapshot into `buf`.
    fn read_branches(&self, from: u32, to: u32, buf: &mut Vec<u8>) -> Result<(), String> {
        buf.clear();
        let mut kept = self.snap.lock();
        if kept.abort {
            return Err("the trie was dropped while its checkpoint was written".into());
        }
        // SAFETY: the trie is alive (Trie::drop waits for this lock and sees `abort`); the JS thread moves the
        // arena only under this lock, and writes records in [from, to) only after copying them into `kept`
        // under this lock (or once `branches_done` has passed them).
        let base = unsafe { (*self.trie.0).branches.as_ptr() };
        for i in from..to {
            let copy = if kept.branches.is_empty() {
                None
            } else {
                kept.branches.remove(&i)
            };
            let b = match &copy {
                Some(b) => b,
                None => unsafe { &*base.add(i as usize) },
            };
            encode_branch(b, buf);
        }
        self.snap.branches_done.store(to, Ordering::Release);
        Ok(())
    }

    fn read_leaves(&self, from: u32, to: u32, buf: &mut Vec<u8>) -> Result<(), String> {
        buf.clear();
        let mut kept = self.snap.lock();
        if kept.abort {
            return Err("the trie was dropped while its checkpoint was written".into());
        }
        // SAFETY: as in read_branches.
        let base = unsafe { (*self.trie.0).leaves.as_ptr() };
        for i in from..to {
            let copy = if kept.leaves.is_empty() {
                None
            } else {
                kept.leaves.remove(&i)
            };
            let l = match &copy {
                Some(l) => l,
                None => unsafe { &*base.add(i as usize) },
            };
            buf.extend_from_slice(&l.key);
            buf.extend_from_slice(&l.parent.to_le_bytes());
            buf.push(l.slot);
        }
        self.snap.leaves_done.store(to, Ordering::Release);
        Ok(())
    }
}

fn encode_branch(b: &Branch, buf: &mut Vec<u8>) {
    if !b.live {
        buf.push(0);
        return;
    }
    buf.push(1);
    buf.extend_from_slice(&b.parent.to_le_bytes());
    buf.push(b.slot);
    buf.push(b.depth);
    buf.extend_from_slice(&b.bitmap.to_le_bytes());
    buf.extend_from_slice(&b.hash);
    for i in 0..16 {
        if b.bitmap & (1 << (15 - i)) != 0 {
            buf.extend_from_slice(&b.children[i].to_le_bytes());
            buf.extend_from_slice(&b.child_hash[i]);
        }
    }
}

/// The writer's output: buffered, hashed, counted.
struct Output<'a> {
    w: BufWriter<&'a File>,
    hasher: Sha256,
    len: u64,
}

impl Output<'_> {
    fn put(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.hasher.update(bytes);
        self.len += bytes.len() as u64;
        self.w.write_all(bytes)
    }
}

/// Atomic replace: the complete, synced temp file takes the name, then the directory entry is synced.
fn publish(tmp: &Path, path: &Path) -> Result<(), String> {
    fs::rename(tmp, path).map_err(|e| format!("renaming {} to {}: {e}", tmp.display(), path.display()))?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| format!("syncing directory {}: {e}", dir.display()))
}
