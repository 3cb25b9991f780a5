/**
 * Per-client request limits of the REST/JSON-RPC interface: the global and write rate buckets, and the
 * client address they are keyed by (X-Forwarded-For only behind proxies the operator trusts).
 */
import { BlockList, isIP } from 'node:net';

/** Spec defaults (node-interface.md, "Limits"). */
export const DEFAULT_RATE_LIMIT_GLOBAL = 60;
export const DEFAULT_RATE_LIMIT_WRITE = 10;
export const DEFAULT_RATE_LIMIT_WINDOW_SECS = 60;
/**
 * Clients tracked per bucket. Beyond this, the client whose window started first is forgotten (it gets a fresh
 * budget): memory stays bounded (~100 B per entry) even when a flood comes from very many addresses.
 */
export const MAX_TRACKED_CLIENTS = 100_000;
/** Longest X-Forwarded-For value inspected; the right-most hops are the ones that matter. */
const MAX_XFF_LENGTH = 4096;

export interface RateLimitOptions {
  /** Requests per client per window, all requests; 0 = unlimited. */
  global: number;
  /** Requests per client per window to write routes (RouteDef.write); 0 = unlimited. */
  write: number;
  windowSecs: number;
  maxTrackedClients?: number;
  /** Monotonic milliseconds; injectable for tests. */
  now?: () => number;
}

export type RateBucket = 'global' | 'write';

/** Why a request was refused: the bucket's limit and the seconds until the client's window ends. */
export interface RateLimited {
  bucket: RateBucket;
  limit: number;
  retryAfterSecs: number;
}

/**
 * Fixed windows per client, each starting at the client's first request in it. Entries live in a Map in
 * window-start order (a restarted window is re-inserted at the end), so expired entries are always at the head
 * and each call removes them in O(expired): no timer, no full scans, and never more than `maxKeys` entries.
 */
export class WindowCounter {
  private readonly entries = new Map<string, { start: number; count: number }>();

  constructor(
    readonly limit: number,
    readonly windowMs: number,
    private readonly maxKeys: number,
  ) {}

  get size(): number {
    return this.entries.size;
  }

  /** Counts one request of `key`; returns 0 when allowed, else the milliseconds until its window ends. */
  hit(key: string, now: number): number {
    this.sweep(now);
    let e = this.entries.get(key);
    if (e === undefined) {
      if (this.entries.size >= this.maxKeys) {
        const oldest = this.entries.keys().next();
        if (!oldest.done) this.entries.delete(oldest.value);
      }
      e = { start: now, count: 0 };
      this.entries.set(key, e);
    }
    e.count++;
    return e.count > this.limit ? Math.max(1, e.start + this.windowMs - now) : 0;
  }

  /** Drops every entry whose window has ended (they sit at the head of the Map). */
  sweep(now: number): void {
    for (const [key, e] of this.entries) {
      if (now - e.start < this.windowMs) break;
      this.entries.delete(key);
    }
  }
}

/** The two buckets of the spec: every request counts against `global`, write routes also against `write`. */
export class RateLimiter {
  private readonly global: WindowCounter | null;
  private readonly write: WindowCounter | null;
  private readonly now: () => number;
  readonly windowSecs: number;

  constructor(opts: RateLimitOptions) {
    if (!Number.isSafeInteger(opts.windowSecs) || opts.windowSecs < 1) throw new RangeError('windowSecs must be >= 1');
    const maxKeys = opts.maxTrackedClients ?? MAX_TRACKED_CLIENTS;
    const windowMs = opts.windowSecs * 1000;
    this.windowSecs = opts.windowSecs;
    this.global = opts.global > 0 ? new WindowCounter(opts.global, windowMs, maxKeys) : null;
    this.write = opts.write > 0 ? new WindowCounter(opts.write, windowMs, maxKeys) : null;
    this.now = opts.now ?? (() => performance.now());
  }

  /** Counts a request of `client`; null when allowed. A request refused by the global bucket is not counted as a write. */
  check(client: string, isWrite: boolean): RateLimited | null {
    if (this.global === null && (this.write === null || !isWrite)) return null;
    const key = rateKey(client);
    const now = this.now();
    if (this.global !== null) {
      const wait = this.global.hit(key, now);
      if (wait > 0) return { bucket: 'global', limit: this.global.limit, retryAfterSecs: Math.ceil(wait / 1000) };
    }
    if (this.write !== null) {
      if (!isWrite) {
        this.write.sweep(now); // reads also age out write windows
        return null;
      }
      const wait = this.write.hit(key, now);
      if (wait > 0) return { bucket: 'write', limit: this.write.limit, retryAfterSecs: Math.ceil(wait / 1000) };
    }
    return null;
  }

  /** Clients currently tracked per bucket (for tests and diagnostics). */
  tracked(): { global: number; write: number } {
    return { global: this.global?.size ?? 0, write: this.write?.size ?? 0 };
  }
}

/**
 * The key a client is counted under: an IPv4 address as is, an IPv6 address by its /64 prefix (one subscriber
 * usually holds a whole /64, so per-address counting would not limit anything).
 */
export function rateKey(ip: string): string {
  if (!ip.includes(':')) return ip;
  const prefix = ipv6Prefix64(ip);
  return prefix ?? ip;
}

function ipv6Prefix64(ip: string): string | null {
  const zone = ip.indexOf('%');
  const addr = zone === -1 ? ip : ip.slice(0, zone);
  const halves = addr.split('::');
  if (halves.length > 2) return null;
  const groups = (s: string): string[] => {
    if (s === '') return [];
    const parts = s.split(':');
    // an embedded dotted IPv4 tail stands for two groups
    if (parts[parts.length - 1].includes('.')) parts.splice(parts.length - 1, 1, '0', '0');
    return parts;
  };
  const head = groups(halves[0]);
  let all = head;
  if (halves.length === 2) {
    const tail = groups(halves[1]);
    const fill = 8 - head.length - tail.length;
    if (fill < 0) return null;
    all = [...head, ...new Array<string>(fill).fill('0'), ...tail];
  }
  if (all.length !== 8) return null;
  const out: string[] = [];
  for (let i = 0; i < 4; i++) {
    const g = all[i];
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return null;
    out.push(Number.parseInt(g, 16).toString(16));
  }
  return `${out.join(':')}::/64`;
}

/**
 * Finds the client address of a request. Without trusted proxies it is the socket's peer and X-Forwarded-For is
 * ignored (any client can write it). When the peer is a trusted proxy, X-Forwarded-For is read from the right
 * (the hop our proxy appended) and the first address that is not itself a trusted proxy is the client.
 */
export class ClientIpResolver {
  private readonly trusted: BlockList | null;

  /** `trustedProxies`: IP addresses or CIDR ranges (e.g. 10.0.0.0/8, fd00::/8). Throws on a malformed entry. */
  constructor(trustedProxies: readonly string[] = []) {
    if (trustedProxies.length === 0) {
      this.trusted = null;
      return;
    }
    const list = new BlockList();
    for (const raw of trustedProxies) {
      const entry = raw.trim();
      const slash = entry.indexOf('/');
      const addr = slash === -1 ? entry : entry.slice(0, slash);
      const family = isIP(addr);
      if (family === 0) throw new RangeError(`trusted proxy ${JSON.stringify(raw)} is not an IP address or CIDR range`);
      const type = family === 4 ? 'ipv4' : 'ipv6';
      if (slash === -1) {
        list.addAddress(addr, type);
      } else {
        const bits = entry.slice(slash + 1);
        if (!/^\d{1,3}$/.test(bits) || Number(bits) > (family === 4 ? 32 : 128)) {
          throw new RangeError(`trusted proxy ${JSON.stringify(raw)} has an invalid prefix length`);
        }
        list.addSubnet(addr, Number(bits), type);
      }
    }
    this.trusted = list;
  }

  get enabled(): boolean {
    return this.trusted !== null;
  }

  private isTrusted(ip: string): boolean {
    const family = isIP(ip);
    return family !== 0 && this.trusted!.check(ip, family === 4 ? 'ipv4' : 'ipv6');
  }

  resolve(peer: string, forwardedFor: string | undefined): string {
    if (this.trusted === null || forwardedFor === undefined || !this.isTrusted(peer)) return peer;
    const hops = forwardedFor.slice(-MAX_XFF_LENGTH).split(',');
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = cleanHop(hops[i]);
      // A malformed hop was written by something we cannot vouch for: stop at the last address we trust.
      if (hop === null) return peer;
      if (!this.isTrusted(hop)) return hop;
      peer = hop;
    }
    return peer;
  }
}

/** "1.2.3.4", " 1.2.3.4:5678", "[::1]:80", "::ffff:1.2.3.4" -> a plain address; null when not an IP. */
function cleanHop(raw: string): string | null {
  let s = raw.trim();
  if (s.startsWith('[')) {
    const end = s.indexOf(']');
    if (end === -1) return null;
    s = s.slice(1, end);
  } else if (s.includes('.') && s.indexOf(':') === s.lastIndexOf(':') && s.includes(':')) {
    s = s.slice(0, s.indexOf(':')); // IPv4 with a port
  }
  if (/^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(s)) s = s.slice(7);
  return isIP(s) === 0 ? null : s.toLowerCase();
}
