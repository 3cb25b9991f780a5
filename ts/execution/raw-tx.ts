/**
 * The hashes of a decoded Ethereum transaction taken from its raw bytes instead of re-serializing it.
 *
 * @ethereumjs computes a transaction's hash as keccak(serialize()) and its signing hash as keccak of a second
 * serialization without the signature, each rebuilding every field from its bigint (~12 µs per transaction at
 * admission, and garbage). When the raw bytes are exactly what serialize() would give back, both are slices of
 * the raw bytes: the hash is keccak(raw), the signing payload is the raw's RLP items before v, r, s (typed: under
 * a new list header behind the type byte; legacy EIP-155: followed by chainId, 0, 0). That holds when the RLP is
 * canonical (the decoder already refused anything else) and every integer field is minimal (no leading zero):
 * @ethereumjs refuses leading zeros in every integer field except a typed transaction's chainId, so the check
 * below is what makes the two serializations equal. Anything else (another type, an unusual encoding) keeps
 * @ethereumjs' own path: same results, only slower. The rules themselves (evm-rules.ts) are untouched: this
 * only fills the transaction's caches (its hash and its sender's public key) with the values it would compute.
 */
import {
  Capability,
  type TxOptions,
  type TypedTransaction,
  create1559FeeMarketTxFromBytesArray,
  createAccessList2930TxFromBytesArray,
  createLegacyTxFromBytesArray,
} from '@ethereumjs/tx';
import { SECP256K1_ORDER_DIV_2 } from '@ethereumjs/util';
import { keccak256 } from '../crypto/index.js';

/** Field indexes holding integers (encoded from a bigint by serialize()), per transaction type. */
const INTEGER_FIELDS: Record<number, { count: number; ints: readonly number[] }> = {
  0: { count: 9, ints: [0, 1, 2, 4, 6, 7, 8] }, // nonce gasPrice gasLimit to value data v r s
  1: { count: 11, ints: [0, 1, 2, 3, 5, 8, 9, 10] }, // chainId nonce gasPrice gasLimit to value data accessList v r s
  2: { count: 12, ints: [0, 1, 2, 3, 4, 6, 9, 10, 11] }, // chainId nonce tip maxFee gasLimit to value data accessList v r s
};

/** Where an RLP item's payload starts and where the item ends, or null when not canonical / out of bounds. */
interface RlpItem {
  start: number;
  payload: number;
  end: number;
  list: boolean;
}

function rlpItem(b: Uint8Array, at: number, limit: number): RlpItem | null {
  if (at >= limit) return null;
  const p = b[at];
  if (p < 0x80) return { start: at, payload: at, end: at + 1, list: false };
  const list = p >= 0xc0;
  const short = list ? p <= 0xf7 : p <= 0xb7;
  let payload: number;
  let len: number;
  if (short) {
    payload = at + 1;
    len = p - (list ? 0xc0 : 0x80);
    if (!list && len === 1 && (payload >= limit || b[payload] < 0x80)) return null;
  } else {
    const lenOfLen = p - (list ? 0xf7 : 0xb7);
    if (at + 1 + lenOfLen > limit || b[at + 1] === 0) return null;
    len = 0;
    for (let i = 0; i < lenOfLen; i++) len = len * 256 + b[at + 1 + i];
    if (len < 56) return null;
    payload = at + 1 + lenOfLen;
  }
  const end = payload + len;
  return end > limit ? null : { start: at, payload, end, list };
}

/** RLP header of a list whose payload is `len` bytes, written into `out` at 0; returns its length. */
function writeListHeader(out: Uint8Array, len: number, at: number): number {
  if (len < 56) {
    out[at] = 0xc0 + len;
    return 1;
  }
  let n = 0;
  for (let l = len; l > 0; l = Math.floor(l / 256)) n++;
  out[at] = 0xf7 + n;
  for (let i = n, l = len; i > 0; i--, l = Math.floor(l / 256)) out[at + i] = l % 256;
  return 1 + n;
}

const listHeaderLength = (len: number): number => (len < 56 ? 1 : len < 256 ? 2 : len < 65536 ? 3 : len < 2 ** 24 ? 4 : 5);

/** Minimal big-endian bytes of a non-negative bigint (empty for 0), as @ethereumjs' bigIntToUnpaddedBytes. */
function unpadded(n: bigint): Uint8Array {
  if (n === 0n) return new Uint8Array(0);
  const hex = n.toString(16);
  return Buffer.from(hex.length % 2 ? `0${hex}` : hex, 'hex');
}

/** RLP string encoding of a short byte string (< 56 bytes). */
function encodeShort(s: Uint8Array): Uint8Array {
  if (s.length === 1 && s[0] < 0x80) return s;
  const out = new Uint8Array(1 + s.length);
  out[0] = 0x80 + s.length;
  out.set(s, 1);
  return out;
}

/**
 * The signing message of `tx` from `raw`, or null when the raw bytes are not what serialize() gives back (then
 * @ethereumjs' own serialization is the reference). `items`: the top-level fields' item bounds.
 */
function signingMessage(tx: TypedTransaction, raw: Uint8Array, items: RlpItem[], listStart: number): Uint8Array | null {
  // The fields before v as they lie in raw: from the first item's prefix to v's prefix.
  const first = listStart;
  const signedEnd = items[items.length - 3].start;
  const fieldsLen = signedEnd - first;
  if (tx.type === 0) {
    if (!tx.supports(Capability.EIP155ReplayProtection)) return null;
    const chainId = encodeShort(unpadded(tx.common.chainId()));
    const payloadLen = fieldsLen + chainId.length + 2;
    const out = new Uint8Array(listHeaderLength(payloadLen) + payloadLen);
    let at = writeListHeader(out, payloadLen, 0);
    out.set(raw.subarray(first, signedEnd), at);
    at += fieldsLen;
    out.set(chainId, at);
    out[at + chainId.length] = 0x80;
    out[at + chainId.length + 1] = 0x80;
    return out;
  }
  const out = new Uint8Array(1 + listHeaderLength(fieldsLen) + fieldsLen);
  out[0] = tx.type;
  const at = 1 + writeListHeader(out, fieldsLen, 1);
  out.set(raw.subarray(first, signedEnd), at);
  return out;
}

/** The top-level items of the transaction's RLP list and where its payload starts, or null. */
function topLevelItems(raw: Uint8Array, type: number): { items: RlpItem[]; listStart: number } | null {
  const spec = INTEGER_FIELDS[type];
  if (spec === undefined) return null;
  const outer = rlpItem(raw, type === 0 ? 0 : 1, raw.length);
  if (outer === null || !outer.list || outer.end !== raw.length) return null;
  const items: RlpItem[] = [];
  for (let at = outer.payload; at < outer.end; ) {
    const item = rlpItem(raw, at, outer.end);
    if (item === null) return null;
    items.push(item);
    at = item.end;
  }
  if (items.length !== spec.count) return null;
  for (const i of spec.ints) {
    const item = items[i];
    // An integer is a string without a leading zero byte (zero itself is the empty string, 0x80).
    if (item.list || (item.end > item.payload && raw[item.payload] === 0)) return null;
  }
  return { items, listStart: outer.payload };
}

/**
 * Fill `tx`'s caches from its raw bytes: its hash (keccak(raw)) and its sender's public key, recovered over the
 * signing hash taken from the raw bytes, with the same recovery @ethereumjs' getSenderPublicKey runs (the
 * Common's ecrecover, EIP-2 low s). Leaves them empty (so @ethereumjs computes them its own way, with its own
 * errors) when the transaction is not frozen, not signed, not a plain legacy/2930/1559 transaction, its bytes are
 * not exactly its serialization, or the recovery fails.
 */
export function fillCachesFromRaw(tx: TypedTransaction, raw: Uint8Array): void {
  if (!Object.isFrozen(tx) || tx.v === undefined || tx.r === undefined || tx.s === undefined) return;
  const layout = topLevelItems(raw, tx.type);
  if (layout === null) return;
  const message = signingMessage(tx, raw, layout.items, layout.listStart);
  if (message === null) return;
  const cache = tx.cache as { hash?: Uint8Array; senderPubKey?: Uint8Array };
  const ecrecover = tx.common.customCrypto.ecrecover;
  if (ecrecover !== undefined && tx.s <= SECP256K1_ORDER_DIV_2 && cache.senderPubKey === undefined) {
    const r = layout.items[layout.items.length - 2];
    const s = layout.items[layout.items.length - 1];
    const chainId = tx.supports(Capability.EIP155ReplayProtection) ? tx.common.chainId() : undefined;
    try {
      cache.senderPubKey = ecrecover(
        keccak256(message),
        tx.v,
        raw.subarray(r.payload, r.end),
        raw.subarray(s.payload, s.end),
        chainId,
      );
    } catch {
      // @ethereumjs' getSenderPublicKey runs it again and words the refusal
    }
  }
  cache.hash ??= keccak256(raw);
}

type RlpValue = Uint8Array | RlpValue[];

/** The items of the RLP list whose payload spans [at, end) of `b`, as views of `b`; null if not canonical. */
function listValues(b: Uint8Array, at: number, end: number): RlpValue[] | null {
  const out: RlpValue[] = [];
  while (at < end) {
    const item = rlpItem(b, at, end);
    if (item === null) return null;
    if (item.list) {
      const inner = listValues(b, item.payload, item.end);
      if (inner === null) return null;
      out.push(inner);
    } else out.push(b.subarray(item.payload, item.end));
    at = item.end;
  }
  return out;
}

/**
 * Decode a legacy, EIP-2930 or EIP-1559 transaction as @ethereumjs' createTxFromRLP does, with the RLP read here:
 * the same values (views of the input, as @ethereumjs' decoder gives for a Buffer; EIP-2930's decoder copies
 * first, so this does too) handed to the same @ethereumjs constructor, so every field rule and its error stay
 * @ethereumjs'. Its RLP decoder slices every item through a generic recursive path (~4 µs per transaction);
 * this one accepts only what it accepts (canonical RLP, one list covering the input) and answers null for
 * anything else, which the caller then hands to createTxFromRLP to be refused in @ethereumjs' words.
 */
export function decodeRawFields(input: Uint8Array, opts: TxOptions): TypedTransaction | null {
  // @ethereumjs' decoder slices (a Buffer's slice is a view, a Uint8Array's a copy): views of a Buffer alike.
  const raw = Buffer.isBuffer(input) ? input : Buffer.from(input);
  const type = raw[0];
  if (type !== 1 && type !== 2 && !(type >= 0xc0)) return null;
  const body = type === 1 ? Uint8Array.from(raw.subarray(1)) : type === 2 ? raw.subarray(1) : raw;
  const outer = rlpItem(body, 0, body.length);
  if (outer === null || !outer.list || outer.end !== body.length) return null;
  const values = listValues(body, outer.payload, outer.end);
  if (values === null) return null;
  if (type === 2) return create1559FeeMarketTxFromBytesArray(values as never, opts);
  if (type === 1) return createAccessList2930TxFromBytesArray(values as never, opts);
  return createLegacyTxFromBytesArray(values as never, opts);
}
