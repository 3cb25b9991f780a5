/**
 * The validator set: the genesis authority set (chain.params.validators, plus authorities the admin added)
 * before DPoS, the staking module's active set and registered validators after; stake, delegations and
 * distributions are the staking module's queries (modules/staking/queries.ts), production counts come from
 * the chain index.
 */
import {
  weiToBase,
  addressFromPublicKey,
  getPoaSet,
  getValidator,
  signTransaction,
  MIN_TX_FEE_BASE,
  ZERO_ADDRESS,
} from '../ledger/index.js';
import { delegationValue, epochDistribution } from '../modules/index.js';
import { type GenesisValidator, validatorSetAt, ledgerParams } from '../chain/index.js';
import { InvalidParamsError, NotFoundError, fromHex, NodeError } from '../util/index.js';
import { type IndexCoverage, type ProducerTally, chainIndex } from '../indexes/index.js';
import type { NodeContext } from './context.js';
import { epochEnd, epochOf, epochStart } from './epochs.js';
import { getPendingNonce } from './account-queries.js';
import { type ValidatorStatusView, validatorViews } from './staking-queries.js';
import { stateIndex } from '../indexes/index.js';

/** Epochs in a validator's blocks-over-time series and reward history (current epoch included). */
export const VALIDATOR_SERIES_EPOCHS = 30;

export interface ValidatorEntry {
  address: string;
  name: string;
  public_key: string;
  is_active: boolean;
  status: ValidatorStatusView;
  /** Bonded stake, base units (0 for PoA authorities). */
  stake: bigint;
  blocks_produced: number;
  last_block_height: number | null;
}

/** A genesis authority, an authority the admin added, a member of the active set or a registered validator. */
export function findValidator(ctx: NodeContext, address: string): GenesisValidator | undefined {
  const a = address.toLowerCase();
  const rec = getValidator(ctx.chain.state, a);
  if (rec) return { address: a, name: rec.name, public_key: rec.public_key };
  const member = [
    ...validatorSetAt(ctx.chain.params, ctx.chain.state, ctx.chain.height + 1),
    ...(getPoaSet(ctx.chain.state) ?? []),
  ].find((m) => m.address === a);
  if (member) return { address: a, name: member.name, public_key: member.public_key };
  return ctx.chain.params.validators.find((v) => v.address === a);
}

function validatorOrThrow(ctx: NodeContext, address: string): GenesisValidator {
  const v = findValidator(ctx, address);
  if (!v) throw new NotFoundError('not a validator');
  return v;
}

/** GET /validators: the active set of the next height (PoA authorities or the DPoS set), then registered validators outside it. */
export async function validatorSet(ctx: NodeContext): Promise<{
  consensus: string;
  active_count: number;
  total: number;
  validators: ValidatorEntry[];
  coverage: IndexCoverage;
}> {
  const idx = await chainIndex(ctx);
  const views = await validatorViews(ctx);
  const publicKey = (address: string): string =>
    getValidator(ctx.chain.state, address)?.public_key ??
    validatorSetAt(ctx.chain.params, ctx.chain.state, ctx.chain.height + 1).find((m) => m.address === address)?.public_key ??
    '';
  const validators = [...views.active, ...views.others].map((v): ValidatorEntry => {
    const t = idx.producers.get(v.address);
    return {
      address: v.address,
      name: v.name,
      public_key: publicKey(v.address),
      is_active: v.status === 'active',
      status: v.status,
      stake: v.stake,
      blocks_produced: t?.blocks ?? 0,
      last_block_height: t && t.lastHeight >= 0 ? t.lastHeight : null,
    };
  });
  return {
    consensus: views.consensus,
    active_count: views.active.length,
    total: validators.length,
    validators,
    coverage: idx.coverage,
  };
}

/** GET /validators/{address}/delegators: from the state index (delegation keys), each with its current value. */
export async function validatorDelegators(ctx: NodeContext, address: string): Promise<Record<string, unknown>> {
  const v = validatorOrThrow(ctx, address);
  const rec = getValidator(ctx.chain.state, v.address);
  const delegators = rec
    ? (await stateIndex(ctx)).delegatorsOf(v.address).map((d) => {
        const del = delegationValue(ctx.chain.state, d, rec);
        return {
          delegator: d,
          amount: del.amount,
          since_epoch: del.since_epoch,
          pending_reward: weiToBase(del.pending_reward_wei),
        };
      })
    : [];
  return { validator: v.address, delegators, total: delegators.length, total_delegated: rec?.tokens ?? 0n };
}

/** Epoch numbers of a series ending at the head's epoch, oldest first. */
function seriesEpochs(ctx: NodeContext): number[] {
  const current = epochOf(ctx.chain.params, ctx.chain.height);
  const first = Math.max(0, current - VALIDATOR_SERIES_EPOCHS + 1);
  return Array.from({ length: current - first + 1 }, (_, i) => first + i);
}

/** GET /validators/{address}/blocks-over-time: blocks produced per epoch. */
export async function validatorBlocksOverTime(ctx: NodeContext, address: string): Promise<Record<string, unknown>> {
  const v = validatorOrThrow(ctx, address);
  const idx = await chainIndex(ctx);
  const series = seriesEpochs(ctx).map((e) => {
    const agg = idx.epochs.get(e);
    return {
      epoch_number: e,
      start_height: epochStart(ctx.chain.params, e),
      end_height: epochEnd(ctx.chain.params, e),
      blocks_produced: agg?.producers.get(v.address)?.blocks ?? 0,
      blocks_total: agg?.blocks ?? 0,
    };
  });
  return { validator: v.address, name: v.name, epoch_length: ctx.chain.params.epochLength, series, coverage: idx.coverage };
}

const rewardFields = (t: ProducerTally | undefined) => ({
  blocks_produced: t?.blocks ?? 0,
  block_rewards: t?.rewardBase ?? 0n,
  fee_rewards: t?.feesBase ?? 0n,
  total_rewards: (t?.rewardBase ?? 0n) + (t?.feesBase ?? 0n),
});

/**
 * GET /validators/{address}/rewards: proposer rewards (block reward + half the fees, paid to the proposer
 * before reward distribution v2) from the chain index, and from v2 the stake-weighted distribution it
 * received per epoch (commission and delegators' part, exact, from the staking records in state).
 */
export async function validatorRewards(ctx: NodeContext, address: string): Promise<Record<string, unknown>> {
  const v = validatorOrThrow(ctx, address);
  const idx = await chainIndex(ctx);
  const rec = getValidator(ctx.chain.state, v.address);
  const staking = (e: number) => {
    const s = epochDistribution(ctx.chain.state, e, v.address);
    return { commission: weiToBase(s.commission), delegator_rewards: weiToBase(s.rewards) };
  };
  const by_epoch = seriesEpochs(ctx)
    .reverse()
    .map((e) => ({ epoch_number: e, ...rewardFields(idx.epochs.get(e)?.producers.get(v.address)), ...staking(e) }));
  return {
    validator: v.address,
    name: v.name,
    ...rewardFields(idx.producers.get(v.address)),
    commission: weiToBase(rec?.commission_total ?? 0n),
    commission_unclaimed: weiToBase(rec?.commission_unclaimed ?? 0n),
    delegator_rewards: weiToBase(rec?.rewards_total ?? 0n),
    by_epoch,
    coverage: idx.coverage,
  };
}

export interface AddValidatorRequest {
  address: string;
  public_key: string;
  name: string;
  caller: string;
}

/** POST /validators by anyone but the genesis admin, or on a node that does not hold the admin's key. */
export class ForbiddenError extends NodeError {
  constructor(message: string) {
    super(message, 'PERMISSION_DENIED');
  }
}

/**
 * POST /validators: adds a PoA authority through the chain, so every node applies the same change at the
 * same height. The caller must be the genesis admin and this node must hold the admin's key (its validator
 * key): the node signs an AddAuthority operation with it and submits it like any transaction; the
 * authority joins the set from the block after its inclusion. Other callers get 403. From the DPoS
 * activation height the set is closed (400): validators register with a signed RegisterValidator.
 */
export async function addValidator(ctx: NodeContext, req: AddValidatorRequest): Promise<Record<string, unknown>> {
  const address = req.address.toLowerCase();
  const caller = req.caller.toLowerCase();
  const admin = ledgerParams(ctx.chain.params).admin;
  const key = ctx.validatorKey;
  const audit = (outcome: string) =>
    ctx.audit?.record('admin_action', { action: 'add_validator', address, name: req.name, caller, outcome });
  if (!admin || caller !== admin || !key || key.address !== admin) {
    audit('refused: not the genesis admin');
    throw new ForbiddenError('caller is not the genesis admin of this chain (or this node does not hold the admin key)');
  }
  if (addressFromPublicKey(fromHex(req.public_key)) !== address)
    throw new InvalidParamsError('public_key does not derive to address');
  if (findValidator(ctx, address)) throw new InvalidParamsError('address is already a validator');
  const nonce = getPendingNonce(ctx, key.address);
  const tx = signTransaction(
    {
      from: key.address,
      to: ZERO_ADDRESS,
      amount: 0n,
      fee: MIN_TX_FEE_BASE,
      nonce,
      data: JSON.stringify({ AddAuthority: { address, public_key: req.public_key.toLowerCase(), name: req.name } }),
      chain_id: ctx.chain.params.chainId,
    },
    key,
  );
  await ctx.admission.submit(tx);
  audit(`submitted ${tx.txid}`);
  return { success: true, address, txid: tx.txid, status: 'pending_in_mempool' };
}
