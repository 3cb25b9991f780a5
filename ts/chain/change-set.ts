/**
 * Encodings of the state history's records (docs/storage.md, "History"): a block's change set as written in
 * its commit batch (every changed key with its previous value, one value), the key list an indexed block
 * keeps, and the previous value an index entry holds.
 */
import type { StateUndo } from '../state/index.js';

/** Value length written for a key that was absent before the block. */
const ABSENT_LENGTH = 0xffff_ffff;
const ABSENT = Buffer.from([0]);

/** An index entry's value: `00` (absent) or `01` · value. */
export function encodePrev(v: Buffer | undefined): Buffer {
  if (v === undefined) return ABSENT;
  const b = Buffer.allocUnsafe(1 + v.length);
  b[0] = 1;
  v.copy(b, 1);
  return b;
}

export const decodePrev = (raw: Buffer): Buffer | undefined => (raw[0] === 0 ? undefined : raw.subarray(1));

function checkKeyLength(k: string): void {
  if (k.length > 255) throw new Error(`state key of ${k.length} bytes cannot be recorded in history`);
}

/**
 * A block's change set in one value: per changed key, length u8 · key · previous value's length u32 BE
 * (0xffffffff: absent) · previous value. One allocation, no object per key: it is built on the commit path.
 */
export function encodeChangeSet(undo: StateUndo): Buffer {
  let n = 0;
  for (const [k, v] of undo) {
    checkKeyLength(k);
    n += 5 + k.length + (v?.length ?? 0);
  }
  const b = Buffer.allocUnsafe(n);
  let o = 0;
  for (const [k, v] of undo) {
    b[o] = k.length;
    o += 1 + b.write(k, o + 1, 'latin1');
    if (v === undefined) {
      b.writeUInt32BE(ABSENT_LENGTH, o);
      o += 4;
    } else {
      b.writeUInt32BE(v.length, o);
      o += 4 + v.copy(b, o + 4);
    }
  }
  return b;
}

/** The change set encodeChangeSet wrote (values are views into `raw`). */
export function decodeChangeSet(raw: Buffer): StateUndo {
  const out: StateUndo = new Map();
  let o = 0;
  while (o < raw.length) {
    const kl = raw[o];
    const key = raw.toString('latin1', o + 1, o + 1 + kl);
    o += 1 + kl;
    const vl = raw.readUInt32BE(o);
    o += 4;
    if (vl === ABSENT_LENGTH) out.set(key, undefined);
    else {
      if (o + vl > raw.length) throw new Error('truncated change set');
      out.set(key, raw.subarray(o, o + vl));
      o += vl;
    }
  }
  return out;
}

/** An indexed block's key list: the keys it changed, each as length u8 · key bytes (values are in the index). */
export function encodeKeyList(changeSet: ReadonlyMap<string, unknown>): Buffer {
  let n = 0;
  for (const k of changeSet.keys()) {
    checkKeyLength(k);
    n += 1 + k.length;
  }
  const b = Buffer.allocUnsafe(n);
  let o = 0;
  for (const k of changeSet.keys()) {
    b[o] = k.length;
    o += 1 + b.write(k, o + 1, 'latin1');
  }
  return b;
}

export function decodeKeyList(raw: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let o = 0; o < raw.length; o += 1 + raw[o]) out.push(raw.subarray(o + 1, o + 1 + raw[o]));
  return out;
}
