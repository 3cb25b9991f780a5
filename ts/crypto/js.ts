import { secp256k1 } from '@noble/curves/secp256k1.js';
import { sha256 as nobleSha256 } from '@noble/hashes/sha2.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { createHash } from 'node:crypto';
import type { CryptoBackend } from './types.js';
import { bloomBits, merkleRootWith } from './shared.js';

// node:crypto's OpenSSL sha256 is several times faster than a pure-JS one for small inputs.
const sha256 = (data: Uint8Array): Uint8Array => {
  try {
    return createHash('sha256').update(data).digest();
  } catch {
    return nobleSha256(data);
  }
};

const verify = (sig64: Uint8Array, digest32: Uint8Array, pubkey65: Uint8Array): boolean => {
  if (sig64.length !== 64 || digest32.length !== 32 || pubkey65.length !== 65) return false;
  try {
    return secp256k1.verify(sig64, digest32, pubkey65, { prehash: false, lowS: false, format: 'compact' });
  } catch {
    return false;
  }
};

/** noble's recovered format is recovery id || r || s; the backends answer r || s || recovery id. */
export function jsSign(digest32: Uint8Array, privateKey32: Uint8Array, entropy32?: Uint8Array): Uint8Array {
  if (digest32.length !== 32 || (entropy32 !== undefined && entropy32.length !== 32))
    throw new TypeError('sign: expected a 32-byte digest (and 32 bytes of entropy)');
  const rec = secp256k1.sign(digest32, privateKey32, { prehash: false, format: 'recovered', extraEntropy: entropy32 ?? false });
  const out = new Uint8Array(65);
  out.set(rec.subarray(1, 65), 0);
  out[64] = rec[0];
  return out;
}

const bloomTest = (bloom: Uint8Array, item: Uint8Array): boolean => {
  for (const bit of bloomBits(keccak_256(item))) {
    if ((bloom[255 - (bit >> 3)] & (1 << (bit & 7))) === 0) return false;
  }
  return true;
};

/** Pure-JS twin of the native addon: same results, slower. */
export const jsBackend: CryptoBackend = {
  name: 'js',
  sha256,
  keccak256: (data) => keccak_256(data),
  sha256Many: (items) => items.map(sha256),
  sha256Segments: (data, ends) => {
    const out = new Uint8Array(ends.length * 32);
    let start = 0;
    ends.forEach((end, i) => {
      out.set(sha256(data.subarray(start, end)), i * 32);
      start = end;
    });
    return out;
  },
  verify,
  verifyBatch: (sigs, digests, pubkeys) => sigs.map((s, i) => verify(s, digests[i], pubkeys[i])),
  recover: (sig64, recid, digest32) => {
    if (sig64.length !== 64 || digest32.length !== 32 || recid < 0 || recid > 3) return null;
    try {
      const sig = secp256k1.Signature.fromBytes(sig64, 'compact').addRecoveryBit(recid);
      return sig.recoverPublicKey(digest32).toBytes(false);
    } catch {
      return null;
    }
  },
  sign: jsSign,
  merkleRoot: (leaves) => merkleRootWith(leaves, sha256),
  bloomAdd: (bloom, item) => {
    for (const bit of bloomBits(keccak_256(item))) bloom[255 - (bit >> 3)] |= 1 << (bit & 7);
  },
  bloomTest,
  bloomScan: (blooms, groups) => {
    const hashed = groups.map((g) => g.map((item) => bloomBits(keccak_256(item))));
    const out: number[] = [];
    blooms.forEach((bloom, idx) => {
      const ok = hashed.every((group) =>
        group.some((bits) => bits.every((bit) => (bloom[255 - (bit >> 3)] & (1 << (bit & 7))) !== 0)),
      );
      if (ok) out.push(idx);
    });
    return out;
  },
};
