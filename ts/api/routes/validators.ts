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
    caller: address('the genesis admin address'),
  },
  { closed: true },
);

export const validatorRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/validators',
    tag: 'validators',
    summary:
      'Validator set: the PoA authorities before DPoS, the DPoS active set from it (then registered validators outside it)',
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
          stake: amount('bonded stake (0 for PoA authorities)'),
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
    admin: true,
    tag: 'validators',
    summary: 'Add a validator (admin)',
    description:
      'Adds a PoA authority through the chain: caller must be the genesis admin and this node must hold the admin key (its validator key), else 403; public_key must derive to address (400). The node signs an AddAuthority operation with the admin key and submits it; the authority joins from the block after its inclusion. From the DPoS activation height the set is closed (400): register with a signed RegisterValidator.',
    statuses: { 403: 'caller is not the genesis admin, or this node does not hold the admin key' },
    body: addValidatorBody,
    response: obj({ success: { type: 'boolean', const: true }, address: address(), txid: str(), status: str() }),
    handler: async (ctx, req) => ({ body: await addValidator(ctx, checkBody<AddValidatorRequest>(req.body, addValidatorBody)) }),
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
      delegators: arr(obj({ delegator: address(), amount: amount(), since_epoch: int(), pending_reward: amount() })),
      total: int(),
      total_delegated: amount(),
    }),
    handler: async (ctx, _req, p) => ({ body: await validatorDelegators(ctx, addressParam(p.address)) }),
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
