import { InvalidParamsError, isAddress, parseJsonExact } from '../util/index.js';

/** Non-negative integer query parameter with a default and an upper clamp. */
export function intParam(q: URLSearchParams, name: string, def: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = q.get(name);
  if (raw === null || raw === '') return def;
  if (!/^\d{1,15}$/.test(raw)) throw new InvalidParamsError(`invalid query parameter ${name}: expected a non-negative integer`);
  return Math.min(Number(raw), max);
}

export function addressParam(raw: string): string {
  if (!isAddress(raw)) throw new InvalidParamsError('invalid address: expected 0x + 40 hex characters');
  return raw.toLowerCase();
}

export function heightParam(raw: string): number {
  if (!/^\d{1,15}$/.test(raw)) throw new InvalidParamsError('invalid block height');
  return Number(raw);
}

/** JSON body as an object (exact integers); a clear 400 otherwise. */
export function jsonBody(body: Buffer): Record<string, unknown> {
  if (body.length === 0) throw new InvalidParamsError('request body required (JSON)');
  let v: unknown;
  try {
    v = parseJsonExact(body.toString('utf8'));
  } catch {
    throw new InvalidParamsError('malformed JSON body');
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new InvalidParamsError('JSON body must be an object');
  return v as Record<string, unknown>;
}
