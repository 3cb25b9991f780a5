/**
 * Readiness (`GET /ready`), apart from liveness (`GET /health`): may a load balancer send this node
 * traffic? Modelled on Erigon's `/health` checks (synced, blocks behind, seconds behind, peers) and
 * Kubernetes readiness probes. docs/operations.md, "Readiness".
 */
import { InvalidParamsError } from '../util/index.js';
import type { NodeContext } from './context.js';

/** Blocks the head may trail the best proven peer height (`--ready-max-lag-blocks`). */
export const DEFAULT_READY_MAX_LAG_BLOCKS = 2;
/** Age of the head, in block times, beyond which the node is not ready (`--ready-max-age`). */
export const DEFAULT_READY_MAX_AGE_BLOCKS = 10;

export type { ReadinessSource } from './context.js';

/** Thresholds a request may tighten (Erigon style): never looser than the node's own. */
export interface ReadinessQuery {
  maxLagBlocks?: number;
  maxAgeMs?: number;
  minPeers?: number;
}

export interface ReadinessReport {
  ready: boolean;
  /** One entry per failing condition, `name: detail`. */
  reasons: string[];
}

/**
 * The best height this node's peers have proven (ts/sync/proven-heads.ts: a head backed by a commit
 * certificate or a known proposer's signature), or null without one: unproven status claims never count.
 */
export function bestProvenPeerHeight(ctx: NodeContext): number | null {
  return ctx.network?.bestProvenPeerHeight() ?? null;
}

/** Seconds with one decimal, for reasons people read. */
const secs = (ms: number): string => `${Math.round(ms / 100) / 10}s`;

/**
 * Judges readiness: synced (not catching up), at most `maxLagBlocks` behind the best proven peer height,
 * a head at most `maxAgeMs` old, the database open, not draining. A node without peers (a dev chain, a
 * lone validator) is judged on the rest.
 */
export function readiness(ctx: NodeContext, q: ReadinessQuery = {}, now = Date.now()): ReadinessReport {
  const src = ctx.readiness;
  const reasons: string[] = [];
  if (src?.draining()) reasons.push('draining: the node is shutting down');
  if (src && !src.dbOpen()) reasons.push('database: not open');
  const height = ctx.chain.height;
  const best = bestProvenPeerHeight(ctx);
  const behind = best === null ? 0 : Math.max(0, best - height);
  if (ctx.network?.catchingUp()) reasons.push(`catching_up: ${behind} blocks behind`);
  const maxLag = Math.min(src?.maxLagBlocks ?? DEFAULT_READY_MAX_LAG_BLOCKS, q.maxLagBlocks ?? Number.POSITIVE_INFINITY);
  if (best !== null && behind > maxLag) {
    reasons.push(`lag: ${behind} blocks behind the best proven peer height ${best} (max ${maxLag})`);
  }
  const configuredAge = src ? src.maxAgeMs : null;
  const maxAge = Math.min(configuredAge ?? Number.POSITIVE_INFINITY, q.maxAgeMs ?? Number.POSITIVE_INFINITY);
  if (Number.isFinite(maxAge)) {
    const age = Math.max(0, now - ctx.chain.head.timestamp * 1000);
    if (age > maxAge) reasons.push(`head_age: head ${height} is ${secs(age)} old (max ${secs(maxAge)})`);
  }
  if (q.minPeers !== undefined) {
    const peers = ctx.network?.peers().length ?? 0;
    if (peers < q.minPeers) reasons.push(`peers: ${peers} connected (min ${q.minPeers})`);
  }
  return { ready: reasons.length === 0, reasons };
}

/** `?max_lag_blocks=N&max_age=10s&min_peers=N`: bad values are a 400, never ignored. */
export function parseReadinessQuery(query: URLSearchParams): ReadinessQuery {
  const out: ReadinessQuery = {};
  const int = (name: string): number | undefined => {
    const raw = query.get(name);
    if (raw === null) return undefined;
    if (!/^\d{1,9}$/.test(raw)) throw new InvalidParamsError(`${name} must be a non-negative integer, got ${raw.slice(0, 40)}`);
    return Number(raw);
  };
  out.maxLagBlocks = int('max_lag_blocks');
  out.minPeers = int('min_peers');
  const age = query.get('max_age');
  if (age !== null) {
    const ms = parseDurationMs(age);
    if (ms === null) throw new InvalidParamsError(`max_age must be a duration like 10s or 500ms, got ${age.slice(0, 40)}`);
    out.maxAgeMs = ms;
  }
  return out;
}

/** `10s`, `1.5s`, `500ms`, or a bare number of seconds (a query's natural unit); null when malformed. */
export function parseDurationMs(raw: string): number | null {
  const m = /^(\d{1,9}(?:\.\d{1,3})?)(ms|s)?$/.exec(raw.trim());
  if (!m) return null;
  return Math.round(Number(m[1]) * (m[2] === 'ms' ? 1 : 1000));
}
