//! Hashing, merkle root and the Ethereum bloom: Rust twins of ts/crypto/shared.ts and js.ts.

use rayon::prelude::*;
use sha2::{Digest, Sha256};
use sha3::Keccak256;

/// Below this many independent items, thread hand-off costs more than it saves.
pub const PAR_MIN: usize = 256;

pub fn sha256(data: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(&Sha256::digest(data));
    out
}

pub fn keccak256(data: &[u8]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(&Keccak256::digest(data));
    out
}

fn sha256_pair(left: &[u8; 32], right: &[u8; 32]) -> [u8; 32] {
    let mut out = [0u8; 32];
    out.copy_from_slice(&Sha256::new().chain_update(left).chain_update(right).finalize());
    out
}

/// sha256 of each item written into `out` (n * 32 bytes), in parallel when there are many.
pub fn sha256_many(items: &[&[u8]], out: &mut [u8]) {
    let job = |(dst, src): (&mut [u8], &&[u8])| dst.copy_from_slice(&Sha256::digest(src));
    if items.len() >= PAR_MIN {
        out.par_chunks_mut(32).zip(items.par_iter()).with_min_len(64).for_each(job);
    } else {
        out.chunks_mut(32).zip(items.iter()).for_each(job);
    }
}

/// Pairwise sha256(left||right) up the tree; an odd node pairs with itself. Caller handles 0 and 1 leaves.
pub fn merkle_root(mut level: Vec<[u8; 32]>) -> [u8; 32] {
    while level.len() > 1 {
        let prev = &level;
        let pair = |i: usize| {
            let left = &prev[2 * i];
            sha256_pair(left, prev.get(2 * i + 1).unwrap_or(left))
        };
        let pairs = level.len().div_ceil(2);
        level = if pairs >= PAR_MIN {
            (0..pairs).into_par_iter().with_min_len(64).map(pair).collect()
        } else {
            (0..pairs).map(pair).collect()
        };
    }
    level[0]
}

/// One bloom bit as (byte index into the 256-byte bloom, mask), per ts/crypto/shared.ts bloomBits:
/// bit = ((h[k] << 8) | h[k+1]) & 2047 for k = 0, 2, 4; byte = 255 - bit / 8; mask = 1 << (bit % 8).
pub type BloomBit = (usize, u8);

pub fn bloom_bits(item: &[u8]) -> [BloomBit; 3] {
    let h = keccak256(item);
    let bit = |k: usize| {
        let b = (((h[k] as usize) << 8) | h[k + 1] as usize) & 2047;
        (255 - (b >> 3), 1u8 << (b & 7))
    };
    [bit(0), bit(2), bit(4)]
}

#[inline]
pub fn bloom_has(bloom: &[u8], bits: &[BloomBit; 3]) -> bool {
    bits.iter().all(|&(i, m)| bloom[i] & m != 0)
}

/// Indexes of blooms where every group has at least one item whose 3 bits are all set.
pub fn bloom_scan(blooms: &[&[u8]], groups: &[Vec<[BloomBit; 3]>]) -> Vec<u32> {
    blooms
        .iter()
        .enumerate()
        .filter(|(_, bloom)| groups.iter().all(|g| g.iter().any(|bits| bloom_has(bloom, bits))))
        .map(|(i, _)| i as u32)
        .collect()
}
