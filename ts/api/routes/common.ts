/** Parameter parsing shared by the REST route groups (400 with a clear message on bad input). */
import { MAX_LIST_OFFSET, isTokenContract, normContract } from '../../services/index.js';
import { InvalidParamsError, isHash } from '../../util/index.js';
import { intParam, jsonBody } from '../params.js';
import { int } from '../schema.js';

const given = (q: URLSearchParams, name: string): boolean => (q.get(name) ?? '') !== '';

/** `limit` query parameter: default def, clamped to 1..max. */
export const limitParam = (q: URLSearchParams, def: number, max: number): number => Math.max(1, intParam(q, 'limit', def, max));

/**
 * `limit` (default def, clamped to 1..max) with `offset` or `page` (0-based; offset = page * limit), not both.
 * Offsets beyond MAX_LIST_OFFSET are refused.
 */
export function listParams(q: URLSearchParams, def: number, max: number): { offset: number; limit: number } {
  const limit = limitParam(q, def, max);
  if (given(q, 'offset') && given(q, 'page')) throw new InvalidParamsError('use either offset or page, not both');
  const offset = given(q, 'page') ? intParam(q, 'page', 0) * limit : intParam(q, 'offset', 0);
  if (offset > MAX_LIST_OFFSET)
    throw new InvalidParamsError(`offset too large: at most ${MAX_LIST_OFFSET} (page * limit for page)`);
  return { offset, limit };
}

/** Token contract path parameter: SRC20_ + 40 hex, returned in canonical (lowercase hex) form. */
export function contractParam(raw: string): string {
  if (!isTokenContract(raw)) throw new InvalidParamsError('invalid token contract: expected SRC20_ + 40 hex characters');
  return normContract(raw);
}

/** txid path parameter: 64 hex with or without 0x. */
export function txidParam(raw: string): string {
  if (!isHash(raw)) throw new InvalidParamsError('invalid txid: expected 64 hex characters (0x optional)');
  return raw;
}

/** A submission body: exactly `{ transaction: <SignedTransaction> }` (the transaction is checked by the ledger). */
export function transactionEnvelope(body: Buffer): unknown {
  const o = jsonBody(body);
  if (!('transaction' in o)) throw new InvalidParamsError('missing field transaction');
  for (const k of Object.keys(o)) if (k !== 'transaction') throw new InvalidParamsError(`unknown field ${k}`);
  return o.transaction;
}

export const atHeight = {
  at_height: int('read the state after this block (any height the node keeps history for, see --history)', { minimum: 0 }),
};

/** `at_height`: undefined when absent (the head state). */
export function atHeightParam(q: URLSearchParams): number | undefined {
  const raw = q.get('at_height');
  if (raw === null || raw === '') return undefined;
  if (!/^\d{1,15}$/.test(raw)) throw new InvalidParamsError('invalid query parameter at_height: expected a block height');
  return Number(raw);
}
