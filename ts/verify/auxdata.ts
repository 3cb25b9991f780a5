/**
 * The CBOR auxdata solc appends to each contract's code (metadata hash, compiler version): where it sits in
 * the recompiled code, and what it holds. A partial match is a match once these regions are ignored.
 */

/** One auxdata region of a bytecode: byte offset and its bytes (hex, no 0x). */
export interface AuxdataRegion {
  offset: number;
  value: string;
}

/** The `.auxdata` values of a contract's legacy assembly: one per contract code it carries (its own, nested creation code). */
export function auxdatasInLegacyAssembly(assembly: unknown): string[] {
  const out: string[] = [];
  const walk = (branch: unknown): void => {
    if (typeof branch !== 'object' || branch === null) return;
    for (const [key, value] of Object.entries(branch)) {
      if (key === '.auxdata' && typeof value === 'string') out.push(value.toLowerCase());
      else if (key === '.data' || Number.isInteger(Number(key))) walk(value);
    }
  };
  walk(assembly);
  return out;
}

/** The auxdata at the end of code (its CBOR length is the last two bytes) when it equals one of `known`. */
export function trailingAuxdata(codeHex: string, known: readonly string[]): AuxdataRegion | null {
  if (codeHex.length < 4) return null;
  const cborBytes = Number.parseInt(codeHex.slice(-4), 16);
  const total = (cborBytes + 2) * 2;
  if (!Number.isFinite(cborBytes) || total > codeHex.length) return null;
  const value = codeHex.slice(-total);
  return known.includes(value) ? { offset: (codeHex.length - total) / 2, value } : null;
}

/**
 * Regions of `original` holding the auxdatas, found by comparing with the code compiled from sources with a
 * space appended to each (`edited`): only real auxdata changes then, so a constant that happens to equal an
 * auxdata value in the code is never taken for one (Sourcify's method). The auxdatas of both compilations
 * come in the same order.
 */
export function auxdataRegionsByDiff(
  original: string,
  edited: string,
  auxdatas: readonly string[],
  editedAuxdatas: readonly string[],
): AuxdataRegion[] {
  const diffs = auxdatas.map((real, i) => ({ real, start: firstDiff(real, editedAuxdatas[i] ?? '') }));
  const found = new Map<number, AuxdataRegion>();
  const n = Math.min(original.length, edited.length);
  for (let p = 0; p < n; p++) {
    if (original[p] === edited[p]) continue;
    for (const { real, start } of diffs) {
      const from = p - start;
      if (start < 0 || from < 0 || from % 2 !== 0 || found.has(from / 2)) continue;
      if (original.slice(from, from + real.length) === real) {
        found.set(from / 2, { offset: from / 2, value: real });
        p = from + real.length - 1;
        break;
      }
    }
  }
  return [...found.values()].sort((a, b) => a.offset - b.offset);
}

function firstDiff(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return a.length === b.length ? -1 : n;
}

/** What an auxdata CBOR map holds: byte strings as hex, text, booleans. Null when it is not such a map. */
export function decodeAuxdata(valueHex: string): Record<string, string | boolean> | null {
  const b = Buffer.from(valueHex, 'hex');
  const cborLength = b.length - 2;
  if (cborLength <= 0) return null;
  let p = 0;
  const head = (): { major: number; n: number } | null => {
    if (p >= cborLength) return null;
    const first = b[p++];
    const major = first >> 5;
    const info = first & 0x1f;
    if (info < 24) return { major, n: info };
    if (info === 24 && p + 1 <= cborLength) return { major, n: b[p++] };
    if (info === 25 && p + 2 <= cborLength) {
      const n = b.readUInt16BE(p);
      p += 2;
      return { major, n };
    }
    return null;
  };
  const map = head();
  if (map?.major !== 5) return null;
  const out: Record<string, string | boolean> = {};
  for (let i = 0; i < map.n; i++) {
    const k = head();
    if (k?.major !== 3 || p + k.n > cborLength) return null;
    const key = b.subarray(p, p + k.n).toString('utf8');
    p += k.n;
    const v = head();
    if (!v) return null;
    if (v.major === 2 || v.major === 3) {
      if (p + v.n > cborLength) return null;
      const bytes = b.subarray(p, p + v.n);
      out[key] = v.major === 2 ? bytes.toString('hex') : bytes.toString('utf8');
      p += v.n;
    } else if (v.major === 7 && (v.n === 20 || v.n === 21)) out[key] = v.n === 21;
    else return null;
  }
  return p === cborLength ? out : null;
}

/** Whether auxdata carries a metadata hash (a match without one is only partial, as in Sourcify). */
export function hasMetadataHash(valueHex: string): boolean {
  const d = decodeAuxdata(valueHex);
  return d !== null && ('ipfs' in d || 'bzzr0' in d || 'bzzr1' in d);
}
