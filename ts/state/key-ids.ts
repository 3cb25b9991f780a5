/**
 * State keys are byte strings held as latin1 JS strings (state-store.ts KeyStr). Building one from a hex
 * id (an address `0x…`, a token contract `SRC20_…`) used to mean a buffer, a hex decode and a latin1
 * encode per key, several times per transaction; here the 20 id bytes are converted once and cached (the
 * same accounts and tokens recur block after block), so a key is a string concatenation.
 */

/** Ids kept; the cache is emptied when it fills (a miss costs one conversion). */
const MAX_CACHED_IDS = 262_144;
const cache = new Map<string, string>();

/**
 * The 20 bytes written in hex after the first `prefixLength` characters of `id`, as a 20-character
 * latin1 string (an id shorter than 20 bytes is padded with zero bytes).
 */
export function id20(id: string, prefixLength = 2): string {
  let s = cache.get(id);
  if (s === undefined) {
    s = Buffer.from(id.slice(prefixLength, prefixLength + 40), 'hex').toString('latin1');
    if (s.length < 20) s = s.padEnd(20, '\0');
    if (cache.size >= MAX_CACHED_IDS) cache.clear();
    cache.set(id, s);
  }
  return s;
}

/** The one-character prefix of a key namespace. */
export const nsChar = (ns: number): string => String.fromCharCode(ns);

/**
 * Whole keys kept per cache (a few blocks' working set: ~10 MB at most each); emptied when full, as
 * the ids are.
 */
const MAX_CACHED_KEYS = 65_536;
const keyCaches = new Map<string, Map<string, string>>();

/**
 * The state key `ns` + id20(id) (accounts: every native transaction builds two or three), cached like
 * the ids: a cached key is one flat string whose hash is already computed, so the overlay's and the
 * trie's map lookups with it neither concatenate, flatten nor hash.
 */
export function nsKey(ns: string, id: string): string {
  let c = keyCaches.get(ns);
  if (c === undefined) keyCaches.set(ns, (c = new Map()));
  let k = c.get(id);
  if (k === undefined) {
    k = ns + id20(id);
    if (c.size >= MAX_CACHED_KEYS) c.clear();
    c.set(id, k);
  }
  return k;
}

/**
 * Keys built from two ids (a token balance: contract, holder), cached by first id then second, as
 * nsKey's keys are; at most MAX_CACHED_KEYS keys (emptied when full).
 */
export class PairKeyCache {
  private readonly byFirst = new Map<string, Map<string, string>>();
  private count = 0;

  constructor(private readonly build: (first: string, second: string) => string) {}

  get(first: string, second: string): string {
    let c = this.byFirst.get(first);
    if (c === undefined) this.byFirst.set(first, (c = new Map()));
    let k = c.get(second);
    if (k === undefined) {
      k = this.build(first, second);
      if (++this.count > MAX_CACHED_KEYS) {
        this.byFirst.clear();
        c.clear();
        this.byFirst.set(first, c);
        this.count = 1;
      }
      c.set(second, k);
    }
    return k;
  }
}
