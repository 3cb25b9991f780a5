import {
  DEFAULT_EPOCH_HISTORY,
  MAX_COMMISSION_BPS,
  MAX_EPOCH_HISTORY,
  MIN_SELF_STAKE_BASE,
  currentEpoch,
  delegationsOf,
  epochHistory,
  registerValidator,
  stakingValidators,
  unbondingOf,
} from '../../services/index.js';
import { addressParam, jsonBody } from '../params.js';
import { address, amount, arr, bool, int, nullable, num, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef } from '../types.js';
import { limitParam } from './common.js';

const registerBody = obj(
  {
    transaction: obj(
      {},
      {
        description: `a SignedTransaction whose data is {"RegisterValidator":{"name","stake","commission_bps"}} (stake at least ${MIN_SELF_STAKE_BASE} base units, commission 0..${MAX_COMMISSION_BPS} bps)`,
      },
    ),
  },
  {
    description:
      "the unsigned spec body (address, stake, commission) is refused: it would let anyone lock another account's coins",
  },
);

export const stakingRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/staking/validators',
    tag: 'staking',
    summary: 'Active set with stake, commission and uptime (PoA: no stake, uptime 1.0)',
    response: obj({
      consensus: str(),
      epoch_number: int(),
      validators: arr(
        obj({
          address: address(),
          name: str(),
          status: str(),
          stake: amount(),
          self_stake: amount(),
          delegated_stake: amount(),
          commission: num('0.0..1.0'),
          commission_bps: int(),
          uptime: num('0.0..1.0'),
          blocks_produced_epoch: int(),
        }),
      ),
      total: int(),
      total_stake: amount(),
      min_self_stake: amount(),
    }),
    handler: async (ctx) => ({ body: await stakingValidators(ctx) }),
  },
  {
    method: 'GET',
    path: '/staking/delegations/:address',
    tag: 'staking',
    summary: 'Active delegations of a delegator',
    params: { address: S.addressParam },
    response: obj({
      delegator: address(),
      delegations: arr(
        obj({
          validator: address(),
          validator_name: str(),
          amount: amount(),
          pending_reward: amount(),
          delegated_at_epoch: int(),
        }),
      ),
      total_delegated: amount(),
      pending_rewards: amount(),
    }),
    handler: async (ctx, _req, p) => ({ body: await delegationsOf(ctx, addressParam(p.address)) }),
  },
  {
    method: 'GET',
    path: '/staking/unbonding/:address',
    tag: 'staking',
    summary: 'Pending unbonding entries of a delegator',
    params: { address: S.addressParam },
    response: obj({
      delegator: address(),
      entries: arr(obj({ validator: address(), amount: amount(), complete_epoch: int() })),
      total_unbonding: amount(),
    }),
    handler: async (ctx, _req, p) => ({ body: await unbondingOf(ctx, addressParam(p.address)) }),
  },
  {
    method: 'POST',
    path: '/staking/register',
    tag: 'staking',
    summary: 'Validator self-registration (minimum self-stake 15,000 coins)',
    description:
      'Takes { transaction } with a signed RegisterValidator; an unsigned body answers 400 "a signed RegisterValidator transaction is required". The operation is dry-run at admission (minimum self-stake, balance, already registered: 400 with the reason).',
    body: registerBody,
    response: obj({
      success: { type: 'boolean', const: true },
      txid: str(),
      address: address(),
      stake: amount(),
      commission: int(),
      status: str(),
    }),
    handler: async (ctx, req) => ({ body: { success: true, ...(await registerValidator(ctx, jsonBody(req.body))) } }),
  },
  {
    method: 'GET',
    path: '/epoch/current',
    tag: 'staking',
    summary: 'Current epoch (fixed windows of 3600 blocks)',
    response: obj({
      ...S.epochHeader,
      progress: num('0..1'),
      current_height: int(),
      blocks_remaining: int(),
      epoch_length: int(),
      consensus: str(),
    }),
    handler: (ctx) => ({ body: currentEpoch(ctx) }),
  },
  {
    method: 'GET',
    path: '/epoch/history',
    tag: 'staking',
    summary: 'Completed epochs, newest first',
    query: { limit: int(`epochs, default ${DEFAULT_EPOCH_HISTORY}, at most ${MAX_EPOCH_HISTORY}`, { minimum: 1 }) },
    response: obj({
      epochs: arr(
        obj({
          ...S.epochHeader,
          start_time: nullable(int()),
          end_time: nullable(int()),
          blocks: int(),
          tx_count: int(),
          validators: arr(obj({ address: address(), blocks_produced: int() })),
          complete: bool('every block of the epoch is indexed'),
        }),
      ),
      total: int('completed epochs'),
      limit: int(),
      epoch_length: int(),
      coverage: S.coverage,
    }),
    handler: async (ctx, req) => ({
      body: await epochHistory(ctx, limitParam(req.query, DEFAULT_EPOCH_HISTORY, MAX_EPOCH_HISTORY)),
    }),
  },
];
