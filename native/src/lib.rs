//! N-API entry points. The JS-facing shapes are documented in ts/crypto/native.ts (NativeAddon);
//! the loader there adapts them to the CryptoBackend interface.
//! Inputs are read in place (no copies); results are fresh Uint8Arrays.

#[macro_use]
mod napi;
mod checkpoint;
mod hash;
mod key_index;
mod records;
mod secp;
mod share;
mod snapshot;
mod trie;

use napi::{napi_env, napi_value, Env};
use rayon::prelude::*;

const BLOOM: usize = 256;

js_fn!(js_sha256, 1, |env, a| {
    match env.bytes(a[0]) {
        Some(d) => env.u8_from(&hash::sha256(d)),
        None => env.throw_type_error(c"sha256: expected a Uint8Array"),
    }
});

js_fn!(js_keccak256, 1, |env, a| {
    match env.bytes(a[0]) {
        Some(d) => env.u8_from(&hash::keccak256(d)),
        None => env.throw_type_error(c"keccak256: expected a Uint8Array"),
    }
});

// sha256Into(data, out) / keccak256Into(data, out): digest written to out[0..32] (out >= 32 bytes).
// Skips allocating a result buffer in native code: the loader copies out of a reused scratch view.
js_fn!(js_sha256_into, 2, |env, a| { digest_into(env, a, hash::sha256) });
js_fn!(js_keccak256_into, 2, |env, a| { digest_into(env, a, hash::keccak256) });

unsafe fn digest_into(env: Env, a: [napi_value; 2], f: fn(&[u8]) -> [u8; 32]) -> napi_value {
    match (env.bytes(a[0]), env.bytes_ptr(a[1])) {
        (Some(d), Some((out, len))) if len >= 32 => {
            let h = f(d); // hash before writing: data may alias out
            std::ptr::copy_nonoverlapping(h.as_ptr(), out, 32);
            env.undefined()
        }
        _ => env.throw_type_error(c"digest: expected (Uint8Array data, Uint8Array out of >= 32 bytes)"),
    }
}

// sha256Many(items: Uint8Array[]) -> Uint8Array of items.length * 32 bytes (the loader slices it).
js_fn!(js_sha256_many, 1, |env, a| {
    let Some(items) = env.byte_list(a[0]) else {
        return env.throw_type_error(c"sha256Many: expected an array of Uint8Array");
    };
    let Some((out_v, out)) = env.new_u8(items.len() * 32) else {
        return env.throw_error(c"sha256Many: allocation failed");
    };
    hash::sha256_many(&items, out);
    out_v
});

// sha256Segments(data, ends) -> Uint8Array of n * 32: sha256 of data[ends[i-1]..ends[i]] for each i.
// `ends` is a Uint8Array over little-endian u32 end offsets (a Uint32Array's bytes). One buffer in, one
// out: a whole trie level is hashed without building an array of views.
js_fn!(js_sha256_segments, 2, |env, a| {
    let (Some(data), Some(ends_raw)) = (env.bytes(a[0]), env.bytes(a[1])) else {
        return env.throw_type_error(c"sha256Segments: expected (Uint8Array data, Uint8Array of u32 ends)");
    };
    let Some(items) = segments(data, ends_raw) else {
        return env.throw_type_error(c"sha256Segments: ends must be ascending u32 offsets within data");
    };
    let Some((out_v, out)) = env.new_u8(items.len() * 32) else {
        return env.throw_error(c"sha256Segments: allocation failed");
    };
    hash::sha256_many(&items, out);
    out_v
});

const TRIE_TAG: u64 = 0x7472_6965_5f76_3031; // "trie_v01"

// trieNew() -> external handle of an empty state trie (dropped with the JS object).
js_fn!(js_trie_new, 0, |env, _a| { env.external(TRIE_TAG, trie::Trie::new()) });

// trieUpdate(handle, keys, keyEnds, values, valueEnds, deletes) -> undefined. Entry i is the state key
// keys[keyEnds[i-1]..keyEnds[i]] with the value values[valueEnds[i-1]..valueEnds[i]], or deleted when
// deletes[i] is 1. Ends are Uint8Arrays over little-endian u32 offsets (a Uint32Array's bytes). Key and
// leaf hashes are computed here (in parallel), so the caller only lays out the raw keys and values.
js_fn!(js_trie_update, 6, |env, a| {
    let Some(t) = env.external_mut::<trie::Trie>(TRIE_TAG, a[0]) else {
        return env.throw_type_error(c"trieUpdate: expected a trie handle");
    };
    let (Some(keys), Some(key_ends), Some(vals), Some(val_ends), Some(dels)) = (
        env.bytes(a[1]),
        env.bytes(a[2]),
        env.bytes(a[3]),
        env.bytes(a[4]),
        env.bytes(a[5]),
    ) else {
        return env.throw_type_error(c"trieUpdate: expected (handle, keys, keyEnds, values, valueEnds, deletes) as Uint8Arrays");
    };
    let n = dels.len();
    let (Some(key_list), Some(val_list)) = (segments(keys, key_ends), segments(vals, val_ends)) else {
        return env.throw_type_error(c"trieUpdate: ends must be ascending u32 offsets within their data");
    };
    if key_list.len() != n || val_list.len() != n {
        return env.throw_type_error(c"trieUpdate: keyEnds, valueEnds and deletes must describe the same entries");
    }
    let values: Vec<Option<&[u8]>> = val_list.iter().zip(dels).map(|(v, &d)| (d != 1).then_some(*v)).collect();
    t.update(&key_list, &values);
    env.undefined()
});

/// Slices of data ending at each little-endian u32 offset of ends_raw; None when malformed.
fn segments<'a>(data: &'a [u8], ends_raw: &[u8]) -> Option<Vec<&'a [u8]>> {
    if ends_raw.len() % 4 != 0 {
        return None;
    }
    let mut out = Vec::with_capacity(ends_raw.len() / 4);
    let mut start = 0usize;
    for c in ends_raw.chunks_exact(4) {
        let end = u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as usize;
        if end < start || end > data.len() {
            return None;
        }
        out.push(&data[start..end]);
        start = end;
    }
    Some(out)
}

// trieRoot(handle) -> 32-byte root (re-hashes only dirty branches).
js_fn!(js_trie_root, 1, |env, a| {
    match env.external_mut::<trie::Trie>(TRIE_TAG, a[0]) {
        Some(t) => env.u8_from(&t.root()),
        None => env.throw_type_error(c"trieRoot: expected a trie handle"),
    }
});

// trieProve(handle, key32) -> encoded steps (see trie.rs) or null when absent.
js_fn!(js_trie_prove, 2, |env, a| {
    let (Some(t), Some(k)) = (env.external_mut::<trie::Trie>(TRIE_TAG, a[0]), env.bytes(a[1])) else {
        return env.throw_type_error(c"trieProve: expected (handle, 32-byte key hash)");
    };
    if k.len() != 32 {
        return env.throw_type_error(c"trieProve: key hash must be 32 bytes");
    }
    let mut key = [0u8; 32];
    key.copy_from_slice(k);
    t.root();
    match t.prove(&key) {
        Some(p) => env.u8_from(&p),
        None => env.null(),
    }
});

// trieSize(handle) -> number of leaves.
js_fn!(js_trie_size, 1, |env, a| {
    match env.external_mut::<trie::Trie>(TRIE_TAG, a[0]) {
        Some(t) => env.uint32(t.len() as u32),
        None => env.throw_type_error(c"trieSize: expected a trie handle"),
    }
});

/// A path handed over as its bytes (a Buffer of the JS string): no string conversion through N-API.
fn path_of(bytes: &[u8]) -> std::path::PathBuf {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        std::path::PathBuf::from(std::ffi::OsStr::from_bytes(bytes))
    }
    #[cfg(not(unix))]
    {
        std::path::PathBuf::from(String::from_utf8_lossy(bytes).into_owned())
    }
}

// trieSave(handle, pathBytes, meta) -> Promise<undefined>: takes a snapshot of the trie now (after
// re-hashing) and writes it to path on libuv's thread pool (see checkpoint.rs); rejects with the I/O error.
// Throws at once when a save of this trie is still running.
js_fn!(js_trie_save, 3, |env, a| {
    let Some(t) = env.external_mut::<trie::Trie>(TRIE_TAG, a[0]) else {
        return env.throw_type_error(c"trieSave: expected a trie handle");
    };
    let (Some(path), Some(meta)) = (env.bytes(a[1]), env.bytes(a[2])) else {
        return env.throw_type_error(c"trieSave: expected (handle, path bytes, meta bytes)");
    };
    let job = match checkpoint::start_save(t, path_of(path), meta.to_vec()) {
        Ok(job) => job,
        Err(msg) => {
            let msg = std::ffi::CString::new(msg).unwrap_or_default();
            return env.throw_error(&msg);
        }
    };
    unsafe fn settle(env: Env, job: checkpoint::SaveJob) -> Result<napi_value, napi_value> {
        match &job.result {
            Ok(()) => Ok(env.undefined()),
            Err(msg) => Err(env.error_value(Some("CHECKPOINT_WRITE"), msg)),
        }
    }
    match env.spawn_promise("trieSave", job, checkpoint::SaveJob::run, settle) {
        Some(p) => p,
        None => env.throw_error(c"trieSave: could not create a promise"),
    }
});

// trieLoad(pathBytes) -> { handle, meta } | reason (a string: missing, truncated, checksum mismatch...).
js_fn!(js_trie_load, 1, |env, a| {
    let Some(path) = env.bytes(a[0]) else {
        return env.throw_type_error(c"trieLoad: expected path bytes");
    };
    match checkpoint::load(&path_of(path)) {
        Ok((trie, meta)) => {
            let out = env.object();
            env.set(out, c"handle", env.external(TRIE_TAG, trie));
            env.set(out, c"meta", env.u8_from(&meta));
            out
        }
        Err(reason) => env.string(&reason),
    }
});

// verify(sig64, digest32, pubkey65) -> boolean; anything malformed is false.
js_fn!(js_verify, 3, |env, a| {
    let ok = match (env.bytes(a[0]), env.bytes(a[1]), env.bytes(a[2])) {
        (Some(s), Some(d), Some(p)) => secp::verify(s, d, p),
        _ => false,
    };
    env.boolean(ok)
});

// verifyBatch(sigs[], digests[], pubkeys[]) -> Uint8Array of 0/1, one per sig, on all cores.
js_fn!(js_verify_batch, 3, |env, a| {
    let (Some(n), Some(_), Some(_)) = (env.array_len(a[0]), env.array_len(a[1]), env.array_len(a[2])) else {
        return env.throw_type_error(c"verifyBatch: expected three arrays");
    };
    let sigs = env.byte_list_lenient(a[0], n);
    let digests = env.byte_list_lenient(a[1], n);
    let pubkeys = env.byte_list_lenient(a[2], n);
    let Some((out_v, out)) = env.new_u8(n as usize) else {
        return env.throw_error(c"verifyBatch: allocation failed");
    };
    let one = |i: usize| match (sigs[i], digests[i], pubkeys[i]) {
        (Some(s), Some(d), Some(p)) => secp::verify(s, d, p) as u8,
        _ => 0,
    };
    if out.len() >= 16 {
        out.par_iter_mut().enumerate().with_min_len(8).for_each(|(i, o)| *o = one(i));
    } else {
        out.iter_mut().enumerate().for_each(|(i, o)| *o = one(i));
    }
    out_v
});

// recover(sig64, recid, digest32) -> 65-byte Uint8Array | null.
js_fn!(js_recover, 3, |env, a| {
    let got = match (env.bytes(a[0]), env.u32(a[1]), env.bytes(a[2])) {
        (Some(s), Some(r), Some(d)) => secp::recover(s, r, d),
        _ => None,
    };
    match got {
        Some(pk) => env.u8_from(&pk),
        None => env.null(),
    }
});

// sign(digest32, seckey32, entropy32 | null) -> 65 bytes r || s || recid; throws on an invalid key or input.
js_fn!(js_sign, 3, |env, a| {
    let entropy = env.bytes(a[2]);
    match (env.bytes(a[0]), env.bytes(a[1])) {
        (Some(d), Some(k)) => match secp::sign(d, k, entropy) {
            Some(sig) => env.u8_from(&sig),
            None => env.throw_error(c"sign: invalid digest, key or entropy"),
        },
        _ => env.throw_type_error(c"sign: expected Uint8Arrays"),
    }
});

// merkleRoot(leaves: Uint8Array[]) -> 32 bytes (empty -> zeros, one leaf -> a copy of it).
js_fn!(js_merkle_root, 1, |env, a| {
    let Some(leaves) = env.byte_list(a[0]) else {
        return env.throw_type_error(c"merkleRoot: expected an array of Uint8Array");
    };
    match leaves.len() {
        0 => env.u8_from(&[0u8; 32]),
        1 => env.u8_from(leaves[0]),
        _ => {
            let mut level = Vec::with_capacity(leaves.len());
            for leaf in &leaves {
                let Ok(l) = <[u8; 32]>::try_from(*leaf) else {
                    return env.throw_type_error(c"merkleRoot: leaves must be 32 bytes");
                };
                level.push(l);
            }
            env.u8_from(&hash::merkle_root(level))
        }
    }
});

// bloomAdd(bloom256, item): sets the 3 bits in place.
js_fn!(js_bloom_add, 2, |env, a| {
    let Some(item) = env.bytes(a[1]) else {
        return env.throw_type_error(c"bloomAdd: expected a Uint8Array item");
    };
    let bits = hash::bloom_bits(item); // hash before touching the bloom: item may alias it
    match env.bytes_ptr(a[0]) {
        Some((p, BLOOM)) => {
            for (i, m) in bits {
                *p.add(i) |= m;
            }
            env.undefined()
        }
        _ => env.throw_type_error(c"bloomAdd: bloom must be a 256-byte Uint8Array"),
    }
});

js_fn!(js_bloom_test, 2, |env, a| {
    match (env.bytes(a[0]), env.bytes(a[1])) {
        (Some(bloom), Some(item)) if bloom.len() == BLOOM => env.boolean(hash::bloom_has(bloom, &hash::bloom_bits(item))),
        _ => env.throw_type_error(c"bloomTest: expected a 256-byte bloom and a Uint8Array item"),
    }
});

// bloomScan(blooms: Uint8Array (n*256 bytes, concatenated) | Uint8Array[], groups: Uint8Array[][])
//   -> Uint32Array of matching bloom indexes.
js_fn!(js_bloom_scan, 2, |env, a| {
    let blooms: Vec<&[u8]> = match env.bytes(a[0]) {
        Some(all) if all.len() % BLOOM == 0 => all.chunks_exact(BLOOM).collect(),
        Some(_) => return env.throw_type_error(c"bloomScan: concatenated blooms must be n*256 bytes"),
        None => match env.byte_list(a[0]) {
            Some(list) if list.iter().all(|b| b.len() == BLOOM) => list,
            _ => return env.throw_type_error(c"bloomScan: blooms must be 256-byte Uint8Arrays"),
        },
    };
    let Some(n_groups) = env.array_len(a[1]) else {
        return env.throw_type_error(c"bloomScan: groups must be an array of arrays");
    };
    let mut groups = Vec::with_capacity(n_groups as usize);
    for g in 0..n_groups {
        let Some(items) = env.element(a[1], g).and_then(|v| env.byte_list(v)) else {
            return env.throw_type_error(c"bloomScan: each group must be an array of Uint8Array");
        };
        groups.push(items.iter().map(|item| hash::bloom_bits(item)).collect::<Vec<_>>());
    }
    env.u32_array_from(&hash::bloom_scan(&blooms, &groups))
});

js_fn!(js_threads, 0, |env, _a| { env.uint32(rayon::current_num_threads() as u32) });

/// Called by node when the .node file is loaded (once per JS environment: main thread and workers).
///
/// # Safety
/// Only node calls this, with a live `env` and its `exports` object.
#[no_mangle]
pub unsafe extern "C" fn napi_register_module_v1(raw: napi_env, exports: napi_value) -> napi_value {
    let env = Env(raw);
    env.export_fn(exports, c"sha256", js_sha256);
    env.export_fn(exports, c"keccak256", js_keccak256);
    env.export_fn(exports, c"sha256Into", js_sha256_into);
    env.export_fn(exports, c"keccak256Into", js_keccak256_into);
    env.export_fn(exports, c"sha256Many", js_sha256_many);
    env.export_fn(exports, c"sha256Segments", js_sha256_segments);
    env.export_fn(exports, c"trieNew", js_trie_new);
    env.export_fn(exports, c"trieUpdate", js_trie_update);
    env.export_fn(exports, c"trieRoot", js_trie_root);
    env.export_fn(exports, c"trieProve", js_trie_prove);
    env.export_fn(exports, c"trieSize", js_trie_size);
    env.export_fn(exports, c"trieSave", js_trie_save);
    env.export_fn(exports, c"trieLoad", js_trie_load);
    env.export_fn(exports, c"verify", js_verify);
    env.export_fn(exports, c"sign", js_sign);
    env.export_fn(exports, c"verifyBatch", js_verify_batch);
    env.export_fn(exports, c"recover", js_recover);
    env.export_fn(exports, c"merkleRoot", js_merkle_root);
    env.export_fn(exports, c"bloomAdd", js_bloom_add);
    env.export_fn(exports, c"bloomTest", js_bloom_test);
    env.export_fn(exports, c"bloomScan", js_bloom_scan);
    env.export_fn(exports, c"threads", js_threads);
    env.set(exports, c"version", env.string(env!("CARGO_PKG_VERSION")));
    exports
}
