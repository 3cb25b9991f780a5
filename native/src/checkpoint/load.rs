//! Reading a checkpoint back (the layout is described in checkpoint.rs).

use super::{CHECKSUM_AT, HEADER_LEN, IO_BUFFER, LEAF_RECORD, MAGIC, MAX_META, VERSION};
use crate::key_index::KeyIndex;
use crate::records::{new_branch, Branch, Leaf, LEAF, NONE};
use crate::trie::Trie;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{BufReader, Read, Seek, SeekFrom};
use std::path::Path;

/// Header fields, as read back.
struct Header {
    branch_len: u32,
    leaf_len: u32,
    free_branches: u32,
    free_leaves: u32,
    keys: u32,
    meta_len: u32,
    root: [u8; 32],
    checksum: [u8; 32],
    raw: [u8; HEADER_LEN],
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn parse_header(raw: [u8; HEADER_LEN], actual_len: u64) -> Result<Header, String> {
    if &raw[0..8] != MAGIC {
        return Err("not a trie checkpoint (bad magic)".into());
    }
    let version = u32_at(&raw, 8);
    if version != VERSION {
        return Err(format!(
            "unsupported checkpoint version {version} (this build reads {VERSION})"
        ));
    }
    let file_len = u64::from_le_bytes(raw[40..48].try_into().unwrap_or([0; 8]));
    if file_len != actual_len {
        return Err(format!(
            "truncated or extended: header says {file_len} bytes, file has {actual_len}"
        ));
    }
    let h = Header {
        branch_len: u32_at(&raw, 12),
        leaf_len: u32_at(&raw, 16),
        free_branches: u32_at(&raw, 20),
        free_leaves: u32_at(&raw, 24),
        keys: u32_at(&raw, 28),
        meta_len: u32_at(&raw, 32),
        root: raw[48..80].try_into().unwrap_or([0; 32]),
        checksum: raw[80..112].try_into().unwrap_or([0; 32]),
        raw,
    };
    let sane = h.branch_len >= 1
        && h.branch_len < LEAF
        && h.leaf_len < LEAF
        && h.free_branches < h.branch_len
        && h.free_leaves <= h.leaf_len
        && h.keys == h.leaf_len - h.free_leaves
        && h.meta_len <= MAX_META;
    if !sane {
        return Err("inconsistent header".into());
    }
    Ok(h)
}

/// Reads a checkpoint: the trie and the caller's meta, or why the file cannot be used. Nothing is built
/// from bytes the checksum has not covered: a first pass checks it, a second (from the page cache) parses,
/// the branches on this thread and the leaves with the key index on another (fixed-size leaf records end the
/// file, so their offset is known).
pub(crate) fn load(path: &Path) -> Result<(Trie, Vec<u8>), String> {
    let io = |e: std::io::Error| format!("reading {}: {e}", path.display());
    let mut file = File::open(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => "missing".to_string(),
        _ => io(e),
    })?;
    let actual_len = file.metadata().map_err(io)?.len();
    if actual_len < HEADER_LEN as u64 {
        return Err(format!("truncated: {actual_len} bytes"));
    }
    let mut raw = [0u8; HEADER_LEN];
    file.read_exact(&mut raw).map_err(io)?;
    let h = parse_header(raw, actual_len)?;
    verify_checksum(&mut file, &h)
        .map_err(io)?
        .then_some(())
        .ok_or("checksum mismatch")?;
    let leaves_at = actual_len
        .checked_sub(h.leaf_len as u64 * LEAF_RECORD)
        .filter(|&at| at >= (HEADER_LEN + h.meta_len as usize) as u64)
        .ok_or("inconsistent header: leaf records do not fit")?;
    let leaf_file = File::open(path).map_err(io)?;
    file.seek(SeekFrom::Start(HEADER_LEN as u64)).map_err(io)?;
    let mut r = BufReader::with_capacity(IO_BUFFER, file);
    let body = |e: BodyError| match e {
        BodyError::Io(e) => io(e),
        BodyError::Invalid(m) => format!("invalid checkpoint body: {m}"),
    };
    let (meta, free_branches, free_leaves) = parse_prefix(&mut r, &h).map_err(body)?;
    let (branches, leaves) = std::thread::scope(|scope| {
        let leaves = scope.spawn(|| {
            let mut lr = BufReader::with_capacity(IO_BUFFER, leaf_file);
            lr.seek(SeekFrom::Start(leaves_at))?;
            parse_leaves(&mut lr, &h, &free_leaves)
        });
        let branches = parse_branches(&mut r, &h).and_then(|b| {
            check(
                r.stream_position()? == leaves_at,
                "branch records do not end where leaf records start",
            )?;
            Ok(b)
        });
        let leaves = leaves.join().unwrap_or(Err(BodyError::Invalid("leaf reader panicked")));
        Ok::<_, BodyError>((branches?, leaves?))
    })
    .map_err(body)?;
    if branches[0].hash != h.root {
        return Err("root in the header does not match the root branch".into());
    }
    let (leaves, by_key) = leaves;
    Ok((Trie::from_parts(branches, leaves, free_branches, free_leaves, by_key), meta))
}

fn verify_checksum(file: &mut File, h: &Header) -> std::io::Result<bool> {
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; IO_BUFFER];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    hasher.update(&h.raw[..CHECKSUM_AT]);
    Ok(hasher.finalize()[..] == h.checksum[..])
}

enum BodyError {
    Io(std::io::Error),
    Invalid(&'static str),
}

impl From<std::io::Error> for BodyError {
    fn from(e: std::io::Error) -> Self {
        BodyError::Io(e)
    }
}

fn check(ok: bool, what: &'static str) -> Result<(), BodyError> {
    if ok {
        Ok(())
    } else {
        Err(BodyError::Invalid(what))
    }
}

fn read_array<const N: usize>(r: &mut impl Read) -> std::io::Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_exact(&mut b)?;
    Ok(b)
}

fn read_u32(r: &mut impl Read) -> std::io::Result<u32> {
    Ok(u32::from_le_bytes(read_array(r)?))
}

type Prefix = (Vec<u8>, Vec<u32>, Vec<u32>);

/// The caller's meta and the free lists.
fn parse_prefix(r: &mut impl Read, h: &Header) -> Result<Prefix, BodyError> {
    let mut meta = vec![0u8; h.meta_len as usize];
    r.read_exact(&mut meta)?;
    let free_branches = (0..h.free_branches)
        .map(|_| read_u32(r))
        .collect::<std::io::Result<Vec<u32>>>()?;
    let free_leaves = (0..h.free_leaves)
        .map(|_| read_u32(r))
        .collect::<std::io::Result<Vec<u32>>>()?;
    check(
        free_branches.iter().all(|&i| i != 0 && i < h.branch_len),
        "free branch index out of range",
    )?;
    check(free_leaves.iter().all(|&i| i < h.leaf_len), "free leaf index out of range")?;
    Ok((meta, free_branches, free_leaves))
}

fn parse_branches(r: &mut impl Read, h: &Header) -> Result<Vec<Branch>, BodyError> {
    let child_ok = |c: u32| {
        if c & LEAF != 0 {
            (c & !LEAF) < h.leaf_len
        } else {
            c != 0 && c < h.branch_len
        }
    };
    let mut branches = Vec::with_capacity(h.branch_len as usize);
    for i in 0..h.branch_len {
        let [tag] = read_array::<1>(r)?;
        if tag == 0 {
            check(i != 0, "the root branch is free")?;
            let mut free = new_branch(NONE, 0, 0);
            free.live = false;
            branches.push(free);
            continue;
        }
        check(tag == 1, "bad branch tag")?;
        let parent = read_u32(r)?;
        let [slot, depth] = read_array::<2>(r)?;
        let bitmap = u16::from_le_bytes(read_array(r)?);
        let hash = read_array::<32>(r)?;
        check(
            if i == 0 { parent == NONE } else { parent < h.branch_len },
            "branch parent out of range",
        )?;
        check(slot < 16 && (depth as usize) < 64, "branch slot or depth out of range")?;
        let mut b = new_branch(parent, slot, depth);
        b.bitmap = bitmap;
        b.hash = hash;
        for n in 0..16 {
            if bitmap & (1 << (15 - n)) != 0 {
                let c = read_u32(r)?;
                check(child_ok(c), "child reference out of range")?;
                b.children[n] = c;
                b.child_hash[n] = read_array(r)?;
            }
        }
        branches.push(b);
    }
    Ok(branches)
}

/// The leaf records (the end of the file) and the key index over the live ones.
fn parse_leaves(r: &mut impl Read, h: &Header, free_leaves: &[u32]) -> Result<(Vec<Leaf>, KeyIndex), BodyError> {
    let mut is_free = vec![false; h.leaf_len as usize];
    free_leaves.iter().for_each(|&i| is_free[i as usize] = true);
    let mut leaves = Vec::with_capacity(h.leaf_len as usize);
    let mut by_key = KeyIndex::with_capacity(h.keys as usize);
    // Keys go into the index a batch at a time, their slots prefetched first: the inserts' cache misses overlap.
    const BATCH: usize = 32;
    let mut batch: Vec<u32> = Vec::with_capacity(BATCH);
    fn insert(by_key: &mut KeyIndex, batch: &mut Vec<u32>, leaves: &[Leaf]) -> Result<(), BodyError> {
        let all_new = batch.iter().all(|&j| by_key.insert(&leaves[j as usize].key, j, leaves));
        batch.clear();
        check(all_new, "a key appears twice")
    }
    for i in 0..h.leaf_len {
        let key = read_array::<32>(r)?;
        let parent = read_u32(r)?;
        let [slot] = read_array::<1>(r)?;
        check(parent < h.branch_len && slot < 16, "leaf parent or slot out of range")?;
        leaves.push(Leaf { key, parent, slot });
        if !is_free[i as usize] {
            by_key.prefetch(&key);
            batch.push(i);
            if batch.len() == BATCH {
                insert(&mut by_key, &mut batch, &leaves)?;
            }
        }
    }
    insert(&mut by_key, &mut batch, &leaves)?;
    check(r.read(&mut [0u8; 1])? == 0, "bytes after the last record")?;
    Ok((leaves, by_key))
}
