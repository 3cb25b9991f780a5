/**
 * Per-key quotas (`--api-keys FILE`, docs/operations.md "API keys"): each key has a label, a rate in weight
 * units per window, method/route weights and allow/deny patterns. The file format is fixed (other tools
 * write it):
 *
 *   {"keys":[{"key":"<at least 16 characters>","label":"team-a","rate":600,"window_secs":60,
 *             "weights":{"eth_getLogs":10,"debug_trace*":50},"allow":["eth_*","GET /chain/*"],"deny":["debug_*"]}]}
 *
 * A pattern names a JSON-RPC method (`eth_getLogs`) or a REST request (`GET /chain/blocks/5`); a trailing
 * `*` matches any suffix. Keys are found by a secret-prefixed SHA-256 of the given key (one hash, one Map lookup, whatever
 * the number of keys) and then confirmed with a constant-time comparison.
 */
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Shortest key accepted, as NATIVE_API_KEY (spec, Authentication). */
export const MIN_API_KEY_LENGTH = 16;
/** Window of a key that names none. */
export const DEFAULT_KEY_WINDOW_SECS = 60;
/** Most keys one file may hold (memory and metric labels stay bounded). */
export const MAX_API_KEYS = 100_000;

/** A parsed entry of the keys file. */
export interface ApiKeyEntry {
  key: string;
  label: string;
  /** Weight units per window; 0 = unlimited. */
  rate: number;
  windowSecs: number;
  weights: Map<string, number>;
  allow: string[] | null;
  deny: string[];
}

export class ApiKeysFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ApiKeysFileError';
  }
}

/** Patterns compiled for matching: exact names in a Set, `prefix*` patterns longest first. */
class PatternSet {
  private readonly exact = new Set<string>();
  private readonly prefixes: string[] = [];

  constructor(patterns: readonly string[]) {
    for (const p of patterns) {
      if (p.endsWith('*')) this.prefixes.push(p.slice(0, -1));
      else this.exact.add(p);
    }
  }

  matches(subject: string): boolean {
    if (this.exact.has(subject)) return true;
    for (const p of this.prefixes) if (subject.startsWith(p)) return true;
    return false;
  }
}

/** Weights by pattern: an exact name wins, else the longest matching prefix, else 1. */
class WeightTable {
  private readonly exact = new Map<string, number>();
  private readonly prefixes: [string, number][] = [];

  constructor(weights: Map<string, number>) {
    for (const [p, w] of weights) {
      if (p.endsWith('*')) this.prefixes.push([p.slice(0, -1), w]);
      else this.exact.set(p, w);
    }
    this.prefixes.sort((a, b) => b[0].length - a[0].length);
  }

  of(subject: string): number {
    const w = this.exact.get(subject);
    if (w !== undefined) return w;
    for (const [p, pw] of this.prefixes) if (subject.startsWith(p)) return pw;
    return 1;
  }
}

/** Why a keyed request was refused (the `reason` label of native_api_key_refused_total). */
export type KeyRefusal = 'rate' | 'denied' | 'unknown_key';

/** A key's budget in its current window: refused requests consume nothing. */
interface Usage {
  start: number;
  used: number;
}

/** One key of the file, with its compiled patterns and its usage (kept across reloads while the key stays). */
export class KeyGrant {
  private readonly allowSet: PatternSet | null;
  private readonly denySet: PatternSet;
  private readonly weightTable: WeightTable;

  constructor(
    readonly entry: ApiKeyEntry,
    /** Shared with the grant that replaces this one on a reload. */
    readonly usage: Usage,
    private readonly now: () => number,
  ) {
    this.allowSet = entry.allow ? new PatternSet(entry.allow) : null;
    this.denySet = new PatternSet(entry.deny);
    this.weightTable = new WeightTable(entry.weights);
  }

  get label(): string {
    return this.entry.label;
  }

  /** Deny wins; without `allow` everything not denied is allowed. */
  allows(subject: string): boolean {
    if (this.denySet.matches(subject)) return false;
    return this.allowSet === null || this.allowSet.matches(subject);
  }

  weightOf(subject: string): number {
    return this.weightTable.of(subject);
  }

  /**
   * Charges `weight` units to the key's window. Returns null when charged, else the seconds until the
   * window ends (nothing charged). A request heavier than the whole rate is never admitted.
   */
  charge(weight: number): number | null {
    const { rate, windowSecs } = this.entry;
    if (rate === 0 || weight === 0) return null;
    const now = this.now();
    const windowMs = windowSecs * 1000;
    if (now - this.usage.start >= windowMs) {
      this.usage.start = now;
      this.usage.used = 0;
    }
    if (this.usage.used + weight > rate) return Math.max(1, Math.ceil((this.usage.start + windowMs - now) / 1000));
    this.usage.used += weight;
    return null;
  }
}

/** The REST subject of a request: `GET /chain/blocks/5` (HEAD is judged as GET). */
export function restSubject(method: string, path: string): string {
  return `${method === 'HEAD' ? 'GET' : method} ${path}`;
}

function fail(where: string, what: string): never {
  throw new ApiKeysFileError(`${where}: ${what}`);
}

function patternList(raw: unknown, where: string): string[] {
  if (!Array.isArray(raw)) fail(where, 'must be an array of patterns');
  return raw.map((p, i) => {
    if (typeof p !== 'string' || p === '' || p.length > 200)
      fail(`${where}[${i}]`, 'must be a pattern string of 1..200 characters');
    if (p.indexOf('*') !== -1 && p.indexOf('*') !== p.length - 1) fail(`${where}[${i}]`, '`*` may only end a pattern');
    return p;
  });
}

function count(raw: unknown, where: string, min: number): number {
  if (typeof raw !== 'number' || !Number.isSafeInteger(raw) || raw < min) fail(where, `must be an integer >= ${min}`);
  return raw;
}

/** Parses the keys file's JSON text; throws ApiKeysFileError naming the first bad field (never the key). */
export function parseApiKeys(text: string): ApiKeyEntry[] {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (err) {
    throw new ApiKeysFileError(`not valid JSON: ${(err as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || !Array.isArray((doc as { keys?: unknown }).keys)) {
    throw new ApiKeysFileError('expected an object {"keys": [...]}');
  }
  const list = (doc as { keys: unknown[] }).keys;
  if (list.length > MAX_API_KEYS) throw new ApiKeysFileError(`at most ${MAX_API_KEYS} keys`);
  const seen = new Set<string>();
  return list.map((raw, i) => {
    const where = `keys[${i}]`;
    if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) fail(where, 'must be an object');
    const e = raw as Record<string, unknown>;
    if (typeof e.key !== 'string' || e.key.length < MIN_API_KEY_LENGTH) {
      fail(`${where}.key`, `must be a string of at least ${MIN_API_KEY_LENGTH} characters`);
    }
    if (seen.has(e.key)) fail(`${where}.key`, 'repeats an earlier key');
    seen.add(e.key);
    if (typeof e.label !== 'string' || e.label === '' || e.label.length > 100) {
      fail(`${where}.label`, 'must be a string of 1..100 characters');
    }
    const weights = new Map<string, number>();
    if (e.weights !== undefined) {
      if (typeof e.weights !== 'object' || e.weights === null || Array.isArray(e.weights))
        fail(`${where}.weights`, 'must be an object');
      for (const [p, w] of Object.entries(e.weights as Record<string, unknown>)) {
        patternList([p], `${where}.weights`);
        weights.set(p, count(w, `${where}.weights.${p}`, 0));
      }
    }
    return {
      key: e.key,
      label: e.label,
      rate: count(e.rate, `${where}.rate`, 0),
      windowSecs: e.window_secs === undefined ? DEFAULT_KEY_WINDOW_SECS : count(e.window_secs, `${where}.window_secs`, 1),
      weights,
      allow: e.allow === undefined ? null : patternList(e.allow, `${where}.allow`),
      deny: e.deny === undefined ? [] : patternList(e.deny, `${where}.deny`),
    };
  });
}

/**
 * The keys in force. `lookup` answers the grant of a key, or null for an unknown one. `reload` replaces the
 * set from the file (SIGHUP); a key that stays keeps its window's usage, so a reload grants no new budget.
 */
export class ApiKeyRegistry {
  /** Secret prefix of this process: lookups by a hash an outsider can neither predict nor steer. */
  private readonly secret = randomBytes(32).toString('hex');
  private byDigest = new Map<string, KeyGrant>();
  private readonly now: () => number;

  constructor(entries: ApiKeyEntry[], opts: { now?: () => number } = {}) {
    this.now = opts.now ?? (() => performance.now());
    this.replace(entries);
  }

  static fromFile(file: string, opts: { now?: () => number } = {}): ApiKeyRegistry {
    return new ApiKeyRegistry(readKeysFile(file), opts);
  }

  get size(): number {
    return this.byDigest.size;
  }

  /** Every label in force (metrics). */
  labels(): string[] {
    return [...new Set([...this.byDigest.values()].map((g) => g.label))];
  }

  /** SHA-256 of secret || key: one-shot `crypto.hash` costs ~1 µs, an HMAC object ~4 µs per request. */
  private digest(key: string): string {
    return hash('sha256', this.secret + key, 'base64');
  }

  replace(entries: ApiKeyEntry[]): void {
    const next = new Map<string, KeyGrant>();
    for (const e of entries) {
      const d = this.digest(e.key);
      const old = this.byDigest.get(d);
      const usage = old ? old.usage : { start: Number.NEGATIVE_INFINITY, used: 0 };
      next.set(d, new KeyGrant(e, usage, this.now));
    }
    this.byDigest = next;
  }

  /** Re-reads the file; on an error the keys in force stay and the error is thrown. */
  reload(file: string): void {
    this.replace(readKeysFile(file));
  }

  /** The grant of `given`, or null when no key matches (confirmed in constant time). */
  lookup(given: string): KeyGrant | null {
    const grant = this.byDigest.get(this.digest(given));
    if (!grant) return null;
    const a = Buffer.from(grant.entry.key);
    const b = Buffer.from(given);
    return a.length === b.length && timingSafeEqual(a, b) ? grant : null;
  }
}

function readKeysFile(file: string): ApiKeyEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ApiKeysFileError(`cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return parseApiKeys(text);
  } catch (err) {
    throw new ApiKeysFileError(`${file}: ${(err as Error).message}`);
  }
}
