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
