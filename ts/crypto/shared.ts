/** Helpers both backends share (the native side reimplements them in Rust). */

/** Ethereum's bloom: bits from byte pairs (0,1), (2,3), (4,5) of keccak256(item), each masked to 11 bits. */
export function bloomBits(hash: Uint8Array): [number, number, number] {
  return [((hash[0] << 8) | hash[1]) & 2047, ((hash[2] << 8) | hash[3]) & 2047, ((hash[4] << 8) | hash[5]) & 2047];
}

export function merkleRootWith(leaves: readonly Uint8Array[], sha256: (d: Uint8Array) => Uint8Array): Uint8Array {
  if (leaves.length === 0) return new Uint8Array(32);
  let level: Uint8Array[] = leaves.slice();
  const pair = new Uint8Array(64);
  while (level.length > 1) {
    const next: Uint8Array[] = [];
    for (let i = 0; i < level.length; i += 2) {
      const left = level[i];
      const right = i + 1 < level.length ? level[i + 1] : left;
      pair.set(left, 0);
      pair.set(right, 32);
      next.push(sha256(pair));
    }
    level = next;
  }
  return level[0];
}
