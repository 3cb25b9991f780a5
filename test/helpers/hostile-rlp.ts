/**
 * Hostile RLP for the decoder and gossip tests (issue 29, finding 2): lists nested as deep as the bytes
 * allow, the shape that made @ethereumjs/rlp copy the rest of the input at every level.
 */

/** `levels` lists each holding only the next one, the innermost empty: 100,000 levels take ~378 KB. */
export function nestedLists(levels: number): Uint8Array {
  // The innermost list is empty (0xc0); each list around it has everything inside as its payload.
  const payloads: number[] = [];
  let size = 1;
  for (let i = 1; i < levels; i++) {
    payloads.push(size);
    size += headerSize(size);
  }
  const out = new Uint8Array(size);
  let pos = 0;
  for (let i = payloads.length - 1; i >= 0; i--) pos = writeListHeader(out, pos, payloads[i]);
  out[pos] = 0xc0;
  return out;
}

function headerSize(length: number): number {
  if (length <= 55) return 1;
  let n = 0;
  for (let l = length; l > 0; l = Math.floor(l / 256)) n++;
  return 1 + n;
}

function writeListHeader(out: Uint8Array, pos: number, length: number): number {
  if (length <= 55) {
    out[pos] = 0xc0 + length;
    return pos + 1;
  }
  const bytes: number[] = [];
  for (let l = length; l > 0; l = Math.floor(l / 256)) bytes.unshift(l % 256);
  out[pos] = 0xf7 + bytes.length;
  out.set(bytes, pos + 1);
  return pos + 1 + bytes.length;
}
