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
