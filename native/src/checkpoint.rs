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

use crate::records::{Branch, Leaf};
use crate::snapshot::{Kept, Side, Snapshot};
use crate::trie::Trie;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{BufWriter, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"NTRIECKP";
const VERSION: u32 = 1;
const HEADER_LEN: usize = 112;
const CHECKSUM_AT: usize = 80;
/// Records the writer copies out per hold of the lock (~160 KiB, some µs: the longest an update waits).
const BRANCH_CHUNK: u32 = 256;
const LEAF_CHUNK: u32 = 4096;
/// A checkpoint's meta is a small caller record (height, root...): anything larger is a corrupt header.
const MAX_META: u32 = 1 << 20;
const IO_BUFFER: usize = 1 << 20;
/// Bytes of a leaf record: key hash, parent, slot.
const LEAF_RECORD: u64 = 37;

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
    let snap = Arc::new(Snapshot::new(t.branches.len(), t.leaves.len()));
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

/// Nice 10 for the calling thread (Linux: a thread's own priority); best effort.
fn lower_priority() {
    #[cfg(target_os = "linux")]
    unsafe {
        extern "C" {
            fn setpriority(which: i32, who: u32, prio: i32) -> i32;
            fn gettid() -> i32;
        }
        const PRIO_PROCESS: i32 = 0;
        setpriority(PRIO_PROCESS, gettid() as u32, 10);
    }
}

fn temp_path(path: &Path) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(".tmp");
    PathBuf::from(p)
}

impl SaveJob {
    /// Writes the file (worker thread); the outcome is left in `result`.
    pub(crate) fn run(&mut self) {
        // On a thread of its own at a lower priority: on a busy machine the writer yields the cores to block
        // production (the libuv thread that runs this only waits; its own priority stays as it was).
        let spawned = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("trie-checkpoint".into())
                .spawn_scoped(scope, || {
                    lower_priority();
                    self.write();
                })
                .map(|t| t.join().is_ok())
        });
        match spawned {
            Ok(true) => {}
            Ok(false) => self.result = Err("the checkpoint writer panicked".into()),
            Err(_) => self.write(), // no thread to be had: write from this one
        }
    }

    fn write(&mut self) {
        let tmp = temp_path(&self.path);
        let written = self.write_to(&tmp);
        // Failed or not, the trie stops keeping records now (not when the job is dropped on the JS thread,
        // which may be waiting in Trie::drop for exactly this).
        self.snap.detach();
        self.result = written.and_then(|()| publish(&tmp, &self.path));
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
        while from < self.snap.branches.len {
            let to = (from + BRANCH_CHUNK).min(self.snap.branches.len);
            // Evaluated under the lock (see read_chunk).
            let base = |_: &Kept| unsafe { (*self.trie.0).branches.as_ptr() };
            self.read_chunk(
                from,
                to,
                &self.snap.branches,
                |k| &mut k.branches,
                base,
                encode_branch,
                &mut buf,
            )?;
            out.put(&buf).map_err(io)?;
            from = to;
        }
        from = 0;
        while from < self.snap.leaves.len {
            let to = (from + LEAF_CHUNK).min(self.snap.leaves.len);
            let base = |_: &Kept| unsafe { (*self.trie.0).leaves.as_ptr() };
            self.read_chunk(from, to, &self.snap.leaves, |k| &mut k.leaves, base, encode_leaf, &mut buf)?;
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
            self.snap.branches.len,
            self.snap.leaves.len,
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

    /// Encodes records [from, to) of one arena as of the snapshot into `buf`. Under the lock the records are
    /// only copied out (a copy the JS thread made, else the live record: ~20 µs for a chunk); they are encoded
    /// after it is released, so an update waits at most for that copy.
    #[allow(clippy::too_many_arguments)]
    fn read_chunk<T: Clone>(
        &self,
        from: u32,
        to: u32,
        side: &Side,
        copies: fn(&mut Kept) -> &mut HashMap<u32, T>,
        base: impl Fn(&Kept) -> *const T,
        encode: fn(&T, &mut Vec<u8>),
        buf: &mut Vec<u8>,
    ) -> Result<(), String> {
        let mut records = Vec::with_capacity((to - from) as usize);
        {
            let mut kept = self.snap.lock();
            if kept.abort {
                return Err("the trie was dropped while its checkpoint was written".into());
            }
            let base = base(&kept);
            let c = copies(&mut kept);
            for i in from..to {
                let copy = if c.is_empty() { None } else { c.remove(&i) };
                // SAFETY: the trie is alive (Trie::drop waits while `started && !detached`); the arena moves only
                // under this lock; a record not yet copied out (>= done) is not written before the JS thread has
                // copied it into `kept`, under this lock.
                records.push(copy.unwrap_or_else(|| unsafe { (*base.add(i as usize)).clone() }));
            }
            side.done.store(to, Ordering::Release);
        }
        buf.clear();
        records.iter().for_each(|r| encode(r, buf));
        Ok(())
    }
}

fn encode_leaf(l: &Leaf, buf: &mut Vec<u8>) {
    buf.extend_from_slice(&l.key);
    buf.extend_from_slice(&l.parent.to_le_bytes());
    buf.push(l.slot);
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
