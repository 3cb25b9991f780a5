/**
 * Path and query parameters of explorer pages. A malformed value is an InvalidParamsError (a 400 page), an
 * unknown but well-formed one a NotFoundError (a 404 page): never a 500.
 */
import { InvalidParamsError, isAddress, isHash, normHash } from '../util/index.js';

export const DEFAULT_PAGE_SIZE = 25;
export const MAX_PAGE_SIZE = 100;
/** Entries any list reaches (offset = (page - 1) * limit stays below it); deeper history is reached by block or address. */
export const MAX_LIST_OFFSET = 10_000;

const DIGITS = /^\d{1,15}$/;

/** Block height: decimal digits within the safe integer range. */
export function heightParam(raw: string): number {
  if (!DIGITS.test(raw)) throw new InvalidParamsError('a block height is a whole number, e.g. 1024');
  return Number(raw);
}

/** Transaction id or block hash: 64 hex with or without 0x, returned as lowercase hex without 0x. */
export function hashParam(raw: string, what = 'transaction id'): string {
  if (!isHash(raw)) throw new InvalidParamsError(`a ${what} is 64 hexadecimal characters (0x optional)`);
  return normHash(raw);
}

/** Account address: 0x + 40 hex, returned in lowercase. */
export function addressParam(raw: string): string {
  if (!isAddress(raw)) throw new InvalidParamsError('an address is 0x followed by 40 hexadecimal characters');
  return raw.toLowerCase();
}

export interface Paging {
  /** 1-based page number, as shown to people. */
  page: number;
  limit: number;
  offset: number;
}

/**
 * `?page=` (1-based, default 1) and `?limit=` (default `def`, at most MAX_PAGE_SIZE). A page starting at or
 * beyond `maxOffset` entries is refused with a 400 saying how deep a list goes.
 */
export function pagingParams(q: URLSearchParams, def = DEFAULT_PAGE_SIZE, maxOffset = MAX_LIST_OFFSET): Paging {
  const limit = intQuery(q, 'limit', def);
  if (limit < 1 || limit > MAX_PAGE_SIZE) throw new InvalidParamsError(`limit must be between 1 and ${MAX_PAGE_SIZE}`);
  const page = intQuery(q, 'page', 1);
  if (page < 1) throw new InvalidParamsError('page numbers start at 1');
  const offset = (page - 1) * limit;
  if (offset >= maxOffset)
    throw new InvalidParamsError(`this list goes ${maxOffset} entries deep; use a block or address page for older entries`);
  return { page, limit, offset };
}

function intQuery(q: URLSearchParams, name: string, def: number): number {
  const raw = q.get(name);
  if (raw === null || raw === '') return def;
  if (!DIGITS.test(raw)) throw new InvalidParamsError(`${name} must be a whole number`);
  return Number(raw);
}
