/** Hex and byte helpers used at every edge (REST, JSON-RPC, storage keys). */

const HEX_RE = /^[0-9a-fA-F]*$/;
const ADDRESS_RE = /^0x[0-9a-fA-F]{40}$/;
const HASH_RE = /^(0x)?[0-9a-fA-F]{64}$/;

export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

export function to0x(bytes: Uint8Array): string {
  return `0x${toHex(bytes)}`;
}

/** Decode hex with or without 0x; throws on odd length or non-hex characters. */
export function fromHex(hex: string): Buffer {
  const body = hex.startsWith('0x') || hex.startsWith('0X') ? hex.slice(2) : hex;
  if (body.length % 2 !== 0 || !HEX_RE.test(body)) throw new Error('invalid hex string');
  return Buffer.from(body, 'hex');
}

export function isAddress(s: unknown): s is string {
  return typeof s === 'string' && ADDRESS_RE.test(s);
}

/** A 64-hex hash or txid, with or without 0x. */
export function isHash(s: unknown): s is string {
  return typeof s === 'string' && HASH_RE.test(s);
}

/** Canonical txid/hash form used internally: 64 lowercase hex, no 0x. */
export function normHash(s: string): string {
  return (s.startsWith('0x') || s.startsWith('0X') ? s.slice(2) : s).toLowerCase();
}

export function u64be(n: bigint | number): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(BigInt(n));
  return b;
}

export function u32be(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n);
  return b;
}

/** Big-endian minimal bytes of a non-negative bigint (empty for 0). */
export function bigToBytes(n: bigint): Buffer {
  if (n === 0n) return Buffer.alloc(0);
  let hex = n.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  return Buffer.from(hex, 'hex');
}

export function bytesToBig(b: Uint8Array): bigint {
  if (b.length === 0) return 0n;
  return BigInt(`0x${toHex(b)}`);
}

/** Quantity hex as JSON-RPC wants it: 0x-prefixed, no leading zeros ("0x0" for zero). */
export function qty(n: bigint | number): string {
  return `0x${n.toString(16)}`;
}
