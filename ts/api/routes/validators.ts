import {
  type AddValidatorRequest,
  addValidator,
  validatorBlocksOverTime,
  validatorDelegators,
  validatorRewards,
  validatorSet,
} from '../../services/index.js';
import { addressParam } from '../params.js';
import { type JsonSchema, address, amount, arr, bool, checkBody, int, nullable, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef } from '../types.js';

const validatorAddr = { address: S.addressParam };
const notValidator = { 404: 'the address is not a validator' };
const rewardFields: Record<string, JsonSchema> = {
  blocks_produced: int(),
  block_rewards: amount('block rewards paid to the proposer (scheduled reward for blocks indexed from the store)'),
  fee_rewards: amount('floor(fee/2) of the included transactions'),
  total_rewards: amount(),
};

const addValidatorBody = obj(
  {
    address: address('new validator'),
    public_key: str('130 hex, uncompressed secp256k1 (leading 04); must derive to address', { pattern: '^04[0-9a-fA-F]{128}$' }),
    name: str('display name', { minLength: 1, maxLength: 64 }),
    caller: address('admin address (a current authority)'),
  },
  { closed: true },
);

export const validatorRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/validators',
    tag: 'validators',
    summary: 'Validator set: the genesis authorities before DPoS, with blocks produced',
    response: obj({
      consensus: str(),
      active_count: int(),
      total: int(),
      validators: arr(
        obj({
          address: address(),
          name: str(),
          public_key: str(),
          is_active: bool(),
          status: str(undefined, { enum: ['active', 'jailed', 'tombstoned', 'unbonding'] }),
          blocks_produced: int('blocks proposed, over the indexed range (see coverage)'),
          last_block_height: nullable(int()),
        }),
      ),
      coverage: S.coverage,
    }),
    handler: async (ctx) => ({ body: await validatorSet(ctx) }),
  },
  {
    method: 'POST',
    path: '/validators',
    auth: true,
    tag: 'validators',
    summary: 'Add a validator (admin)',
    description:
      'Checks the body, that public_key derives to address and that caller is an admin (a current authority), records the attempt in the audit log, then answers 400: validator-set changes arrive with the staking module (DPoS).',
    body: addValidatorBody,
    response: obj({ success: { type: 'boolean', const: true }, address: address() }),
    handler: (ctx, req) => addValidator(ctx, checkBody<AddValidatorRequest>(req.body, addValidatorBody)),
  },
  {
    method: 'GET',
    path: '/validators/:address/delegators',
    tag: 'validators',
    summary: 'Delegators of a validator (none before the staking module)',
    params: validatorAddr,
    statuses: notValidator,
    response: obj({
      validator: address(),
      delegators: arr(obj({ delegator: address(), amount: amount(), since_epoch: int() })),
      total: int(),
      total_delegated: amount(),
    }),
    handler: (ctx, _req, p) => ({ body: validatorDelegators(ctx, addressParam(p.address)) }),
  },
  {
    method: 'GET',
    path: '/validators/:address/rewards',
    tag: 'validators',
    summary: 'Proposer rewards, all time and for the last 30 epochs (newest first)',
    params: validatorAddr,
    statuses: notValidator,
    response: obj({
      validator: address(),
      name: str(),
      ...rewardFields,
      by_epoch: arr(obj({ epoch_number: int(), ...rewardFields })),
      coverage: S.coverage,
    }),
    handler: async (ctx, _req, p) => ({ body: await validatorRewards(ctx, addressParam(p.address)) }),
  },
  {
    method: 'GET',
    path: '/validators/:address/blocks-over-time',
    tag: 'validators',
    summary: 'Blocks produced per epoch over the last 30 epochs (oldest first)',
    params: validatorAddr,
    statuses: notValidator,
    response: obj({
      validator: address(),
      name: str(),
      epoch_length: int(),
      series: arr(obj({ ...S.epochHeader, blocks_produced: int(), blocks_total: int('blocks of the epoch indexed so far') })),
      coverage: S.coverage,
    }),
    handler: async (ctx, _req, p) => ({ body: await validatorBlocksOverTime(ctx, addressParam(p.address)) }),
  },
];
