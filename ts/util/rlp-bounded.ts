/**
 * A defensive RLP decoder for bytes from peers (gossip, request/response frames, blocks and
 * transactions they carry). @ethereumjs/rlp copies the rest of the input at every list level
 * (`Uint8Array.prototype.slice`), so 100,000 nested lists in 378 KB cost gigabytes and seconds before any
 * check could refuse them (issue 29, finding 2). This decoder returns views into the input (no copy at
 * any level), refuses lists nested deeper than a small limit as soon as it meets one, and accepts only the
 * canonical encoding (the shortest length form, a single byte below 0x80 as itself, no trailing bytes),
 * so one value has one encoding. Its cost is linear in the input and it allocates only the decoded items.
 */

export type RlpItem = Uint8Array | RlpItem[];

/** Malformed, non-canonical or too deeply nested RLP. */
export class RlpDecodeError extends Error {}

/**
 * Deepest list nesting any of the node's wire formats needs: an EVM transaction's access list
 * (transaction > access list > entry > storage keys) is 4; blocks, certificates, evidence and batches are 3 or less.
 */
export const MAX_RLP_DEPTH = 4;

/** Lengths are at most 4 bytes long: nothing the node reads comes near 4 GiB. */
const MAX_LENGTH_BYTES = 4;

// The end of the item last read (a module variable: no result object per item).
let cursor = 0;

/**
 * Decode one RLP item that spans `bytes` exactly. Byte strings are views into `bytes` (callers that keep
 * them beyond the input's life copy them). An empty input decodes to an empty byte string, as
 * @ethereumjs/rlp's decode does (callers relied on it).
 */
export function decodeRlp(bytes: Uint8Array, maxDepth = MAX_RLP_DEPTH): RlpItem {
  if (bytes.length === 0) return bytes.subarray(0, 0);
  const item = readItem(bytes, 0, bytes.length, 0, maxDepth, true) as RlpItem;
  if (cursor !== bytes.length) throw new RlpDecodeError(`${bytes.length - cursor} bytes after the RLP item`);
  return item;
}

/** Check that `bytes` is one canonical RLP item nested at most maxDepth deep, allocating nothing. */
export function checkRlp(bytes: Uint8Array, maxDepth = MAX_RLP_DEPTH): void {
  if (bytes.length === 0) throw new RlpDecodeError('empty input');
  readItem(bytes, 0, bytes.length, 0, maxDepth, false);
  if (cursor !== bytes.length) throw new RlpDecodeError(`${bytes.length - cursor} bytes after the RLP item`);
}

function readLength(b: Uint8Array, pos: number, lengthBytes: number, end: number): number {
  if (lengthBytes > MAX_LENGTH_BYTES) throw new RlpDecodeError(`a length of ${lengthBytes} bytes`);
  if (pos + lengthBytes > end) throw new RlpDecodeError('truncated length');
  if (b[pos] === 0) throw new RlpDecodeError('non-canonical length (leading zero)');
  let n = 0;
  for (let i = 0; i < lengthBytes; i++) n = n * 256 + b[pos + i];
  if (n <= 55) throw new RlpDecodeError('non-canonical length (long form for at most 55 bytes)');
  return n;
}

/** The item at pos, which must end by `end`; sets `cursor` to its end. Builds the value only when `build`. */
function readItem(b: Uint8Array, pos: number, end: number, depth: number, maxDepth: number, build: boolean): RlpItem | undefined {
  const first = b[pos];
  if (first < 0x80) {
    cursor = pos + 1;
    return build ? b.subarray(pos, pos + 1) : undefined;
  }
  let start: number;
  let length: number;
  const list = first >= 0xc0;
  if (first <= 0xb7) {
    start = pos + 1;
    length = first - 0x80;
  } else if (first <= 0xbf) {
    length = readLength(b, pos + 1, first - 0xb7, end);
    start = pos + 1 + (first - 0xb7);
  } else if (first <= 0xf7) {
    start = pos + 1;
    length = first - 0xc0;
  } else {
    length = readLength(b, pos + 1, first - 0xf7, end);
    start = pos + 1 + (first - 0xf7);
  }
  const stop = start + length;
  if (stop > end) throw new RlpDecodeError('an item runs past the end of its input or list');
  if (!list) {
    if (length === 1 && b[start] < 0x80) throw new RlpDecodeError('non-canonical single byte');
    cursor = stop;
    return build ? b.subarray(start, stop) : undefined;
  }
  if (depth >= maxDepth) throw new RlpDecodeError(`lists nested deeper than ${maxDepth}`);
  const items: RlpItem[] | undefined = build ? [] : undefined;
  let p = start;
  while (p < stop) {
    const item = readItem(b, p, stop, depth + 1, maxDepth, build);
    if (items) items.push(item as RlpItem);
    p = cursor;
  }
  cursor = stop;
  return items;
}
