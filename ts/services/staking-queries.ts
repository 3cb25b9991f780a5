/**
 * Staking (DPoS) and epochs for the transports: validators with stake, commission, status and uptime,
 * delegations with their pending F1 rewards, unbonding entries, per-epoch records, and the signed
 * RegisterValidator submission. The reads of staking records are the module's queries
 * (modules/staking/queries.ts); this file adds the chain's view (next height's set, indexes, epochs).
 */
import {
  weiToBase,
  MAX_COMMISSION_BPS as MAX_COMMISSION,
  MIN_SELF_STAKE_BASE,
  SIGNED_BLOCKS_WINDOW,
  delegatorValidators,
  getActiveSet,
  getTotals,
  getValidator,
  registry,
  parseSignedTransaction,
  txKind,
} from '../ledger/index.js';
import {
  type ValidatorStatusView,
  blocksProducedIn,
  delegationValue,
  statusOf,
  unbondingValue,
  uptimeOf,
  validatorStake,
} from '../modules/index.js';
import { epochOf as epochAt, validatorSetAt } from '../chain/index.js';
import { InvalidParamsError } from '../util/index.js';
import { chainIndex } from '../indexes/index.js';
import type { ChainContext, NodeContext } from './context.js';
import { epochEnd, epochOf, epochStart, epochView } from './epochs.js';
import { stateIndex } from '../indexes/index.js';

export { MIN_SELF_STAKE_BASE };
export const MAX_COMMISSION_BPS = Number(MAX_COMMISSION);
export const DEFAULT_EPOCH_HISTORY = 10;
export const MAX_EPOCH_HISTORY = 100;

export type { ValidatorStatusView };

export interface StakingValidatorView {
  address: string;
  name: string;
  status: ValidatorStatusView;
  stake: bigint;
  self_stake: bigint;
  delegated_stake: bigint;
  commission: number;
  commission_bps: number;
  uptime: number;
  blocks_produced_epoch: number;
  voting_power: bigint;
  delegators: number;
  jailed_until_epoch: number | null;
}

/**
 * Every validator this height knows: the active set (PoA authorities with no stake before DPoS, or the DPoS
 * set) first, then registered validators outside it; the same list feeds GET /validators, GET
 * /staking/validators and native_getValidatorSet, so the three agree.
 */
export async function validatorViews(
  ctx: ChainContext,
): Promise<{ consensus: string; epoch: number; active: StakingValidatorView[]; others: StakingValidatorView[] }> {
  await ctx.chain.settled();
  const { chain } = ctx;
  const height = chain.height;
  const next = height + 1;
  const epoch = epochAt(chain.params, height);
  const set = validatorSetAt(chain.params, chain.state, next);
  const activeSet = new Set(set.map((v) => v.address));
  const idx = await stateIndex(ctx);
  const view = (address: string, name: string, power: bigint): StakingValidatorView => {
    const { record: v, stake, self_stake, delegated_stake } = validatorStake(chain.state, address);
    return {
      address,
      name: v?.name ?? name,
      status: v ? statusOf(v, activeSet) : activeSet.has(address) ? 'active' : 'unbonding',
      stake,
      self_stake,
      delegated_stake,
      commission: v ? Number(v.commission_bps) / 10_000 : 0.0,
      commission_bps: v ? Number(v.commission_bps) : 0,
      uptime: v ? uptimeOf(chain.state, address) : 1.0,
      blocks_produced_epoch: blocksProducedIn(chain.state, epoch, address),
      voting_power: power,
      delegators: idx.delegatorsOf(address).length,
      jailed_until_epoch: v?.status === 'jailed' ? v.jailed_until_epoch : null,
    };
  };
  const active = set.map((m) => view(m.address, m.name, m.power));
  const others = registry(chain.state)
    .filter((a) => !activeSet.has(a))
    .map((a) => view(a, a, 0n));
  return { consensus: chain.consensusAt(next), epoch, active, others };
}

/** GET /staking/validators: the active set with stake, commission and uptime, then the other registered validators. */
export async function stakingValidators(ctx: NodeContext): Promise<Record<string, unknown>> {
  const v = await validatorViews(ctx);
  const all = [...v.active, ...v.others];
  // blocks produced this epoch under PoA come from the chain index (no staking records before DPoS).
  const idx = await chainIndex(ctx);
  const agg = idx.epochs.get(v.epoch);
  for (const row of all) row.blocks_produced_epoch ||= agg?.producers.get(row.address)?.blocks ?? 0;
  return {
    consensus: v.consensus,
    epoch_number: v.epoch,
    validators: all,
    total: all.length,
    active_count: v.active.length,
    total_stake: getTotals(ctx.chain.state).bonded,
    min_self_stake: MIN_SELF_STAKE_BASE,
  };
}

/** One delegation row (REST base units; JSON-RPC converts to wei hex). */
export interface DelegationView {
  validator: string;
  validator_name: string;
  amount: bigint;
  pending_reward_wei: bigint;
  delegated_at_epoch: number;
  status: ValidatorStatusView;
  unbonding: { amount: bigint; complete_epoch: number }[];
}

/** Delegations of a delegator, with pending rewards (exact F1 values) and unbonding entries per validator. */
export async function delegationViews(ctx: ChainContext, delegator: string): Promise<DelegationView[]> {
  await ctx.chain.settled();
  const d = delegator.toLowerCase();
  const state = ctx.chain.state;
  const active = new Set(getActiveSet(state)?.members.map((m) => m.address) ?? []);
  const unbonding = await unbondingEntries(ctx, d);
  const validators = new Set([...delegatorValidators(state, d), ...unbonding.map((u) => u.validator)]);
  const rows: DelegationView[] = [];
  for (const va of [...validators].sort()) {
    const v = getValidator(state, va);
    if (!v) continue;
    const del = delegationValue(state, d, v);
    rows.push({
      validator: va,
      validator_name: v.name,
      amount: del.amount,
      pending_reward_wei: del.pending_reward_wei,
      delegated_at_epoch: del.since_epoch,
      status: statusOf(v, active),
      unbonding: unbonding.filter((u) => u.validator === va).map(({ amount, complete_epoch }) => ({ amount, complete_epoch })),
    });
  }
  return rows;
}

/** Unbonding entries of a delegator: the current value of its share of each pool. */
export async function unbondingEntries(
  ctx: ChainContext,
  delegator: string,
): Promise<{ validator: string; amount: bigint; complete_epoch: number }[]> {
  const idx = await stateIndex(ctx);
  const state = ctx.chain.state;
  return idx.unbondingOf(delegator).map(([validator, epoch]) => ({
    validator,
    amount: unbondingValue(state, delegator, validator, epoch),
    complete_epoch: epoch,
  }));
}

/** GET /staking/delegations/{address}. */
export async function delegationsOf(ctx: ChainContext, address: string): Promise<Record<string, unknown>> {
  const rows = (await delegationViews(ctx, address)).filter((r) => r.amount > 0n);
  return {
    delegator: address.toLowerCase(),
    delegations: rows.map((r) => ({
      validator: r.validator,
      validator_name: r.validator_name,
      amount: r.amount,
      pending_reward: weiToBase(r.pending_reward_wei),
      delegated_at_epoch: r.delegated_at_epoch,
      status: r.status,
    })),
    total_delegated: rows.reduce((s, r) => s + r.amount, 0n),
    pending_rewards: weiToBase(rows.reduce((s, r) => s + r.pending_reward_wei, 0n)),
  };
}

/** GET /staking/unbonding/{address}. */
export async function unbondingOf(ctx: ChainContext, address: string): Promise<Record<string, unknown>> {
  const entries = await unbondingEntries(ctx, address.toLowerCase());
  return { delegator: address.toLowerCase(), entries, total_unbonding: entries.reduce((s, e) => s + e.amount, 0n) };
}

/**
 * POST /staking/register: `{ transaction }` carrying a signed RegisterValidator. The spec's unsigned body
 * (address, stake, commission) would let anyone lock another account's coins, so it is refused.
 */
export async function registerValidator(ctx: NodeContext, body: Record<string, unknown>): Promise<Record<string, unknown>> {
  if (!('transaction' in body)) {
    throw new InvalidParamsError(
      "a signed RegisterValidator transaction is required: POST { transaction } (an unsigned address/stake/commission body could lock anyone's coins)",
    );
  }
  const tx = parseSignedTransaction(body.transaction);
  let kind: ReturnType<typeof txKind>;
  try {
    kind = txKind(tx);
  } catch (err) {
    throw new InvalidParamsError((err as Error).message);
  }
  if (kind.kind !== 'staking' || kind.op.name !== 'RegisterValidator')
    throw new InvalidParamsError('expected RegisterValidator operation in tx.data');
  await ctx.admission.submit(tx);
  return {
    txid: tx.txid,
    address: tx.from_address,
    stake: kind.op.fields.stake,
    commission: Number(kind.op.fields.commission_bps),
    status: 'pending_in_mempool',
  };
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
    active_validators: validatorSetAt(ctx.chain.params, ctx.chain.state, height + 1).length,
  };
}

/** GET /epoch/history: completed epochs, newest first, with blocks produced per validator. */
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

export { SIGNED_BLOCKS_WINDOW };
