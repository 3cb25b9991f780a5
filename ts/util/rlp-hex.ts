/**
 * RLP written as hex strings and decoded to bytes once at the end. The hot encoders (typed
 * transactions, receipt lists) use it instead of building an intermediate buffer per field; tests keep
 * their output byte-identical to @ethereumjs/rlp, which remains the decoder and the reference.
 */

/** Minimal big-endian hex of a non-negative integer ('' for zero, as RLP encodes 0). */
export function rlpIntHex(n: bigint | number): string {
  if (n === 0 || n === 0n) return '';
  const h = n.toString(16);
  return h.length % 2 ? `0${h}` : h;
}

/** RLP of a byte string given as hex: a single byte below 0x80 is its own encoding. */
export function rlpStrHex(hex: string): string {
  const len = hex.length >> 1;
  if (len === 1 && Number.parseInt(hex, 16) < 0x80) return hex;
  return rlpLengthPrefix(len, 0x80) + hex;
}

/** RLP of a list whose items are already encoded (as hex) one after another. */
export const rlpListHex = (body: string): string => rlpLengthPrefix(body.length >> 1, 0xc0) + body;

function rlpLengthPrefix(len: number, base: number): string {
  if (len <= 55) return (base + len).toString(16);
  let l = len.toString(16);
  if (l.length % 2) l = `0${l}`;
  return (base + 55 + (l.length >> 1)).toString(16) + l;
}

/** Bytes of an RLP length prefix (short form below 56, else the long form) written at `at`; returns the next offset. */
function writeLengthPrefix(out: Buffer, at: number, len: number, base: number): number {
  if (len <= 55) {
    out[at] = base + len;
    return at + 1;
  }
  const n = byteLength(len);
  out[at] = base + 55 + n;
  for (let i = n; i >= 1; i--) out[at + i] = Math.floor(len / 256 ** (n - i)) % 256;
  return at + 1 + n;
}

const byteLength = (len: number): number => (len < 0x100 ? 1 : len < 0x1_0000 ? 2 : len < 0x100_0000 ? 3 : 4);
const prefixLength = (len: number): number => (len <= 55 ? 1 : 1 + byteLength(len));
const isSelfEncoded = (b: Uint8Array): boolean => b.length === 1 && b[0] < 0x80;

/**
 * RLP of a list of byte strings in one allocation (the block body's transaction list: tens of thousands
 * of items, which @ethereumjs/rlp copies several times each). Byte-identical to RLP.encode(items).
 */
export function rlpBytesList(items: readonly Uint8Array[], tail: readonly Buffer[] = []): Buffer {
  let payload = 0;
  for (const b of items) payload += isSelfEncoded(b) ? 1 : prefixLength(b.length) + b.length;
  for (const t of tail) payload += t.length;
  const out = Buffer.allocUnsafe(prefixLength(payload) + payload);
  let at = writeLengthPrefix(out, 0, payload, 0xc0);
  for (const b of items) {
    if (isSelfEncoded(b)) out[at++] = b[0];
    else {
      at = writeLengthPrefix(out, at, b.length, 0x80);
      out.set(b, at);
      at += b.length;
    }
  }
  for (const t of tail) {
    out.set(t, at);
    at += t.length;
  }
  return out;
}
