/**
 * Cacheable answers (docs/operations.md, "Cache headers"): a REST GET whose answer can never change (a
 * block at a finalized height, a transaction in one, state read at a finalized `at_height`) carries
 * `Cache-Control: public, max-age=31536000, immutable` and a strong ETag, and a request whose
 * If-None-Match names that ETag gets 304; every other JSON GET answer is about the head and carries
 * `Cache-Control: no-store`. A CDN or HAProxy's cache in front of a fleet can then serve the immutable ones.
 */
import { hash } from 'node:crypto';
import type { NodeContext } from '../services/index.js';

/** One year: what "never changes" means to caches (RFC 8246's immutable adds: do not revalidate). */
export const IMMUTABLE_MAX_AGE_SECS = 31_536_000;
export const IMMUTABLE_CACHE_CONTROL = `public, max-age=${IMMUTABLE_MAX_AGE_SECS}, immutable`;
export const NO_STORE = 'no-store';

/**
 * 'immutable' when what was read at `height` can no longer change: the height is final. Never on the dev
 * chain, whose history evm_revert, anvil_reset and friends rewrite.
 */
export function cacheAt(ctx: NodeContext, height: number): 'immutable' | undefined {
  if (ctx.dev) return undefined;
  return height <= ctx.consensus.finalizedHeight() ? 'immutable' : undefined;
}

/** A strong ETag of the exact bytes sent: the first 160 bits of their SHA-256, base64url. */
export function etagOf(body: string): string {
  return `"${hash('sha256', body, 'base64url').slice(0, 27)}"`;
}

/**
 * Whether an If-None-Match header matches `etag` (RFC 9110 §13.1.2: weak comparison, a list of tags or `*`).
 */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false;
  const v = ifNoneMatch.trim();
  if (v === '*') return true;
  for (const raw of v.split(',')) {
    const tag = raw.trim();
    if ((tag.startsWith('W/') ? tag.slice(2) : tag) === etag) return true;
  }
  return false;
}
