/**
 * The validator set. Until the staking module (DPoS) arrives, the set is the genesis authority set
 * (chain.params.validators), every member active, with no stake; production counts come from the chain index.
 */
import type { GenesisValidator } from '../chain/params.js';
import { addressFromPublicKey } from '../ledger/keys.js';
import { InvalidParamsError, NotFoundError } from '../util/errors.js';
import { fromHex } from '../util/hex.js';
import { type IndexCoverage, type ProducerTally, chainIndex } from './chain-index.js';
import type { NodeContext } from './context.js';
import { epochEnd, epochOf, epochStart } from './epochs.js';
import { NotActiveError, VALIDATOR_CHANGES_NOT_ACTIVE } from './not-active.js';

/** Epochs in a validator's blocks-over-time series and reward history (current epoch included). */
export const VALIDATOR_SERIES_EPOCHS = 30;

export interface ValidatorEntry {
  address: string;
  name: string;
  public_key: string;
  is_active: boolean;
  status: 'active';
  blocks_produced: number;
  last_block_height: number | null;
}

export function findValidator(ctx: NodeContext, address: string): GenesisValidator | undefined {
  return ctx.chain.params.validators.find((v) => v.address === address.toLowerCase());
}

function validatorOrThrow(ctx: NodeContext, address: string): GenesisValidator {
  const v = findValidator(ctx, address);
  if (!v) throw new NotFoundError('not a validator');
  return v;
}

/** GET /validators. */
export async function validatorSet(ctx: NodeContext): Promise<{
  consensus: string;
  active_count: number;
  total: number;
  validators: ValidatorEntry[];
  coverage: IndexCoverage;
}> {
  const idx = await chainIndex(ctx);
  const validators = ctx.chain.params.validators.map((v): ValidatorEntry => {
    const t = idx.producers.get(v.address);
    return {
      address: v.address,
      name: v.name,
      public_key: v.public_key,
      is_active: true,
      status: 'active',
      blocks_produced: t?.blocks ?? 0,
      last_block_height: t && t.lastHeight >= 0 ? t.lastHeight : null,
    };
  });
  return {
    consensus: ctx.chain.head.consensus,
    active_count: validators.length,
    total: validators.length,
    validators,
    coverage: idx.coverage,
  };
}

/** GET /validators/{address}/delegators: nobody delegates before the staking module. */
export function validatorDelegators(ctx: NodeContext, address: string): Record<string, unknown> {
  const v = validatorOrThrow(ctx, address);
  return { validator: v.address, delegators: [], total: 0, total_delegated: 0n };
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

/** GET /validators/{address}/rewards: proposer rewards (block reward + half the fees), all time and per epoch. */
export async function validatorRewards(ctx: NodeContext, address: string): Promise<Record<string, unknown>> {
  const v = validatorOrThrow(ctx, address);
  const idx = await chainIndex(ctx);
  const by_epoch = seriesEpochs(ctx)
    .reverse()
    .map((e) => ({ epoch_number: e, ...rewardFields(idx.epochs.get(e)?.producers.get(v.address)) }));
  return { validator: v.address, name: v.name, ...rewardFields(idx.producers.get(v.address)), by_epoch, coverage: idx.coverage };
}

export interface AddValidatorRequest {
  address: string;
  public_key: string;
  name: string;
  caller: string;
}

/**
 * POST /validators: checks the request (public key derives to the address, caller is an admin, i.e. a current
 * authority; not already a validator), records the attempt in the audit log, then refuses: the PoA authority
 * set is fixed by genesis until the staking module.
 */
export function addValidator(ctx: NodeContext, req: AddValidatorRequest): never {
  const address = req.address.toLowerCase();
  const caller = req.caller.toLowerCase();
  if (addressFromPublicKey(fromHex(req.public_key)) !== address)
    throw new InvalidParamsError('public_key does not derive to address');
  if (!findValidator(ctx, caller)) throw new InvalidParamsError('caller is not an admin of this chain (a current authority)');
  if (findValidator(ctx, address)) throw new InvalidParamsError('address is already a validator');
  ctx.audit?.record('admin_action', { action: 'add_validator', address, name: req.name, caller, outcome: 'refused: not active' });
  throw new NotActiveError(VALIDATOR_CHANGES_NOT_ACTIVE);
}
