/**
 * A sorted set of strings with positional reads: sorted chunks of at most 2 x CHUNK strings (the layout
 * of Python's sortedcontainers). Adding or removing costs a binary search and a splice inside one chunk;
 * reading `limit` items from position `offset` walks the chunk lengths, then the items. No npm package
 * offered rank access with cheap mutation (js-sdsl and functional-red-black-tree reach a position by
 * walking or allocate on every change; sorted-btree has no positions), and the NFT lists need both.
 */
const CHUNK = 512;

/** First index in `xs` (sorted) whose value is >= x. */
function lowerBound(xs: readonly string[], x: string): number {
  let lo = 0;
  let hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (xs[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class SortedList {
  private chunks: string[][] = [];
  /** The last (largest) string of each chunk. */
  private maxes: string[] = [];
  size = 0;

  /** Index of the chunk that holds x, or would (the last one for x above every string). */
  private chunkOf(x: string): number {
    const i = lowerBound(this.maxes, x);
    return i === this.maxes.length ? i - 1 : i;
  }

  has(x: string): boolean {
    if (this.size === 0) return false;
    const c = this.chunks[this.chunkOf(x)];
    const j = lowerBound(c, x);
    return c[j] === x;
  }

  /** Adds x; false when it was there already. */
  add(x: string): boolean {
    if (this.size === 0) {
      this.chunks = [[x]];
      this.maxes = [x];
      this.size = 1;
      return true;
    }
    const i = this.chunkOf(x);
    const c = this.chunks[i];
    const j = lowerBound(c, x);
    if (c[j] === x) return false;
    c.splice(j, 0, x);
    this.size++;
    this.maxes[i] = c[c.length - 1];
    if (c.length > 2 * CHUNK) {
      const tail = c.splice(CHUNK);
      this.chunks.splice(i + 1, 0, tail);
      this.maxes.splice(i, 1, c[c.length - 1], tail[tail.length - 1]);
    }
    return true;
  }

  /** Removes x; false when it was not there. */
  delete(x: string): boolean {
    if (this.size === 0) return false;
    const i = this.chunkOf(x);
    const c = this.chunks[i];
    const j = lowerBound(c, x);
    if (c[j] !== x) return false;
    c.splice(j, 1);
    this.size--;
    if (c.length === 0) {
      this.chunks.splice(i, 1);
      this.maxes.splice(i, 1);
    } else this.maxes[i] = c[c.length - 1];
    return true;
  }

  /** Up to `limit` strings from position `offset`, in order. */
  slice(offset: number, limit: number): string[] {
    const out: string[] = [];
    let skip = offset;
    let i = 0;
    while (i < this.chunks.length && skip >= this.chunks[i].length) skip -= this.chunks[i++].length;
    for (; i < this.chunks.length && out.length < limit; i++, skip = 0) {
      const c = this.chunks[i];
      for (let j = skip; j < c.length && out.length < limit; j++) out.push(c[j]);
    }
    return out;
  }

  *[Symbol.iterator](): IterableIterator<string> {
    for (const c of this.chunks) yield* c;
  }
}
