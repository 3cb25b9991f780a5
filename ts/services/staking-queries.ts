/**
 * Staking (DPoS) and epochs, answered from the proof-of-authority state that exists now: the authority set
 * with no stake, no delegations, no unbonding. The staking module replaces these with stake-weighted data.
 */
import { BASE_PER_COIN } from '../ledger/units.js';
import { InvalidParamsError } from '../util/errors.js';
import { chainIndex, uptimeOf } from './chain-index.js';
import type { NodeContext } from './context.js';
import { epochEnd, epochOf, epochStart, epochView } from './epochs.js';
import { NotActiveError, STAKING_NOT_ACTIVE } from './not-active.js';

/** Spec: minimum self-stake 15,000 coins. */
export const MIN_SELF_STAKE_BASE = 15_000n * BASE_PER_COIN;
export const MAX_COMMISSION_BPS = 10_000;
export const DEFAULT_EPOCH_HISTORY = 10;
export const MAX_EPOCH_HISTORY = 100;

/** GET /staking/validators: the active set with stake, commission and uptime (PoA: no stake, uptime 1.0). */
export async function stakingValidators(ctx: NodeContext): Promise<Record<string, unknown>> {
  const idx = await chainIndex(ctx);
  const epoch = idx.epochs.get(epochOf(ctx.chain.params, ctx.chain.height));
  const validators = ctx.chain.params.validators.map((v) => ({
    address: v.address,
    name: v.name,
    status: 'active',
    stake: 0n,
    self_stake: 0n,
    delegated_stake: 0n,
    commission: 0,
    commission_bps: 0,
    uptime: uptimeOf(epoch?.signing.get(v.address)),
    blocks_produced_epoch: epoch?.producers.get(v.address)?.blocks ?? 0,
  }));
  return {
    consensus: ctx.chain.head.consensus,
    epoch_number: epochOf(ctx.chain.params, ctx.chain.height),
    validators,
    total: validators.length,
    total_stake: 0n,
    min_self_stake: MIN_SELF_STAKE_BASE,
  };
}

/** GET /staking/delegations/{address}. */
export function delegationsOf(_ctx: NodeContext, address: string): Record<string, unknown> {
  return { delegator: address.toLowerCase(), delegations: [], total_delegated: 0n, pending_rewards: 0n };
}

/** GET /staking/unbonding/{address}. */
export function unbondingOf(_ctx: NodeContext, address: string): Record<string, unknown> {
  return { delegator: address.toLowerCase(), entries: [], total_unbonding: 0n };
}

export interface RegisterRequest {
  address: string;
  stake: bigint | number;
  commission: number;
}

/** POST /staking/register: checks stake and commission, then refuses: the staking module is not active. */
export function registerValidator(_ctx: NodeContext, req: RegisterRequest): never {
  if (BigInt(req.stake) < MIN_SELF_STAKE_BASE) {
    throw new InvalidParamsError(`stake must be at least ${MIN_SELF_STAKE_BASE} base units (15,000 coins)`);
  }
  if (!Number.isInteger(req.commission) || req.commission < 0 || req.commission > MAX_COMMISSION_BPS) {
    throw new InvalidParamsError(`commission must be an integer number of basis points from 0 to ${MAX_COMMISSION_BPS}`);
  }
  throw new NotActiveError(STAKING_NOT_ACTIVE);
}

/** GET /epoch/current. */
export function currentEpoch(ctx: NodeContext): Record<string, unknown> {
  const height = ctx.chain.height;
  const view = epochView(ctx.chain.params, height);
  return {
    ...view,
    current_height: height,
    blocks_remaining: view.end_height - height,
    epoch_length: ctx.chain.params.epochLength,
    consensus: ctx.chain.head.consensus,
  };
}

/** GET /epoch/history: completed epochs, newest first. */
export async function epochHistory(ctx: NodeContext, limit: number): Promise<Record<string, unknown>> {
  const idx = await chainIndex(ctx);
  const current = epochOf(ctx.chain.params, ctx.chain.height);
  const epochs = [];
  for (let e = current - 1; e >= 0 && epochs.length < limit; e--) {
    const agg = idx.epochs.get(e);
    const producers = [...(agg?.producers ?? [])].map(([address, t]) => ({ address, blocks_produced: t.blocks }));
    epochs.push({
      epoch_number: e,
      start_height: epochStart(ctx.chain.params, e),
      end_height: epochEnd(ctx.chain.params, e),
      start_time: agg?.firstTs ?? null,
      end_time: agg?.lastTs ?? null,
      blocks: agg?.blocks ?? 0,
      tx_count: agg?.txs ?? 0,
      validators: producers,
      complete: idx.coverage.from_height <= Math.max(1, epochStart(ctx.chain.params, e)),
    });
  }
  return { epochs, total: current, limit, epoch_length: ctx.chain.params.epochLength, coverage: idx.coverage };
}
