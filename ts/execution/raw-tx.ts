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
import { type RlpItem, decodeRlp } from '../util/index.js';

/** Field indexes holding integers (encoded from a bigint by serialize()), per transaction type. */
const INTEGER_FIELDS: Record<number, { count: number; ints: readonly number[] }> = {
  0: { count: 9, ints: [0, 1, 2, 4, 6, 7, 8] }, // nonce gasPrice gasLimit to value data v r s
  1: { count: 11, ints: [0, 1, 2, 3, 5, 8, 9, 10] }, // chainId nonce gasPrice gasLimit to value data accessList v r s
  2: { count: 12, ints: [0, 1, 2, 3, 4, 6, 9, 10, 11] }, // chainId nonce tip maxFee gasLimit to value data accessList v r s
};

/**
 * The fields decodeRawFields read last, and from which bytes: admission decodes a transaction and then, in the
 * same synchronous step, takes its hashes (fillCachesFromRaw) from the same bytes, which need not be read twice.
 * Only fields that are views of `raw` itself are kept (their offsets locate the signed part), and only until the
 * next fillCachesFromRaw.
 */
let lastRead: { raw: Uint8Array; fields: RlpItem[] } | null = null;

/** The RLP list under the type byte (typed) or the whole input (legacy), read canonically; null otherwise. */
function rlpFields(raw: Uint8Array, type: number): RlpItem[] | null {
  try {
    const fields = decodeRlp(type === 0 ? raw : raw.subarray(1));
    return Array.isArray(fields) ? fields : null;
  } catch {
    return null;
  }
}

/** Length of the RLP prefix in front of a canonically encoded byte string. */
function stringPrefixLength(s: Uint8Array): number {
  if (s.length === 1 && s[0] < 0x80) return 0;
  if (s.length <= 55) return 1;
  return 1 + (s.length < 256 ? 1 : s.length < 65536 ? 2 : s.length < 2 ** 24 ? 3 : 4);
}

/** RLP header of a list whose payload is `len` bytes, written into `out` at `at`; returns its length. */
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
 * The signing message of `tx`: the raw bytes of its fields before v, r, s (`from`..`to` in `raw`) under a new
 * list header (typed: behind the type byte; legacy EIP-155: followed by chainId, 0, 0). Null for a legacy
 * transaction without EIP-155 (admission refuses it; @ethereumjs words that).
 */
function signingMessage(tx: TypedTransaction, raw: Uint8Array, from: number, to: number): Uint8Array | null {
  const fieldsLen = to - from;
  if (tx.type === 0) {
    if (!tx.supports(Capability.EIP155ReplayProtection)) return null;
    const chainId = encodeShort(unpadded(tx.common.chainId()));
    const payloadLen = fieldsLen + chainId.length + 2;
    const out = new Uint8Array(listHeaderLength(payloadLen) + payloadLen);
    let at = writeListHeader(out, payloadLen, 0);
    out.set(raw.subarray(from, to), at);
    at += fieldsLen;
    out.set(chainId, at);
    out[at + chainId.length] = 0x80;
    out[at + chainId.length + 1] = 0x80;
    return out;
  }
  const out = new Uint8Array(1 + listHeaderLength(fieldsLen) + fieldsLen);
  out[0] = tx.type;
  const at = 1 + writeListHeader(out, fieldsLen, 1);
  out.set(raw.subarray(from, to), at);
  return out;
}

/**
 * Where the signed fields lie in `raw` ([from, to): the list's payload up to v's prefix) and v, r, s as views, or
 * null unless the bytes are exactly what serialize() would write (canonical RLP, every integer field minimal).
 */
function signedLayout(
  raw: Uint8Array,
  type: number,
  read: RlpItem[] | undefined,
): { from: number; to: number; r: Uint8Array; s: Uint8Array } | null {
  const spec = INTEGER_FIELDS[type];
  const fields = spec === undefined ? null : (read ?? rlpFields(raw, type));
  if (spec === undefined || fields === null || fields.length !== spec.count) return null;
  for (const i of spec.ints) {
    const f = fields[i];
    // An integer is a string without a leading zero byte (zero itself is the empty string, 0x80).
    if (Array.isArray(f) || (f.length > 0 && f[0] === 0)) return null;
  }
  const head = type === 0 ? 0 : 1; // the list's header starts after the type byte
  const from = head + (raw[head] <= 0xf7 ? 1 : 1 + raw[head] - 0xf7);
  const v = fields[spec.count - 3] as Uint8Array;
  const to = v.byteOffset - raw.byteOffset - stringPrefixLength(v);
  return { from, to, r: fields[spec.count - 2] as Uint8Array, s: fields[spec.count - 1] as Uint8Array };
}

/**
 * Fill `tx`'s caches from its raw bytes: its hash (keccak(raw)) and its sender's public key, recovered over the
 * signing hash taken from the raw bytes, with the same recovery @ethereumjs' getSenderPublicKey runs (the
 * Common's ecrecover, EIP-2 low s). Leaves them empty (so @ethereumjs computes them its own way, with its own
 * errors) when the transaction is not frozen, not signed, not a plain legacy/2930/1559 transaction, its bytes are
 * not exactly its serialization, or the recovery fails.
 */
export function fillCachesFromRaw(tx: TypedTransaction, raw: Uint8Array): void {
  const read = lastRead?.raw === raw ? lastRead.fields : undefined;
  lastRead = null;
  if (!Object.isFrozen(tx) || tx.v === undefined || tx.r === undefined || tx.s === undefined) return;
  const layout = signedLayout(raw, tx.type, read);
  if (layout === null) return;
  const message = signingMessage(tx, raw, layout.from, layout.to);
  if (message === null) return;
  const cache = tx.cache as { hash?: Uint8Array; senderPubKey?: Uint8Array };
  const ecrecover = tx.common.customCrypto.ecrecover;
  if (ecrecover !== undefined && tx.s <= SECP256K1_ORDER_DIV_2 && cache.senderPubKey === undefined) {
    const chainId = tx.supports(Capability.EIP155ReplayProtection) ? tx.common.chainId() : undefined;
    try {
      cache.senderPubKey = ecrecover(keccak256(message), tx.v, layout.r, layout.s, chainId);
    } catch {
      // @ethereumjs' getSenderPublicKey runs it again and words the refusal
    }
  }
  cache.hash ??= keccak256(raw);
}

/**
 * Decode a legacy, EIP-2930 or EIP-1559 transaction as @ethereumjs' createTxFromRLP does, with the RLP read by the
 * node's canonical decoder (util/rlp-bounded.ts): the same values (views of the input, as @ethereumjs' decoder
 * gives for a Buffer; for EIP-2930 it copies the input into a Uint8Array first, so this does too) handed to the
 * same @ethereumjs constructor, so every field rule and its error stay @ethereumjs'. Its own RLP decoder slices
 * every item through a generic recursive path (~4 µs per transaction). Answers null for anything this reader does
 * not take (another type, non-canonical RLP, lists nested deeper than an access list, trailing bytes), which the
 * caller then hands to createTxFromRLP to be refused in @ethereumjs' words.
 */
export function decodeRawFields(input: Uint8Array, opts: TxOptions): TypedTransaction | null {
  // @ethereumjs' decoder slices (a Buffer's slice is a view, a Uint8Array's a copy): views of a Buffer alike.
  const raw = Buffer.isBuffer(input) ? input : Buffer.from(input);
  const type = raw[0];
  if (type !== 1 && type !== 2 && !(type >= 0xc0)) return null;
  const values = rlpFields(type === 1 ? new Uint8Array(raw) : raw, type >= 0xc0 ? 0 : type);
  if (values === null) return null;
  lastRead = type !== 1 && raw === input ? { raw, fields: values } : null;
  if (type === 2) return create1559FeeMarketTxFromBytesArray(values as never, opts);
  if (type === 1) return createAccessList2930TxFromBytesArray(values as never, opts);
  return createLegacyTxFromBytesArray(values as never, opts);
}
