import { chainInfo, chainPerformance, stateRootAt, validateChainShared } from '../../services/index.js';
import { heightParam } from '../params.js';
import { bool, hash, int, nullable, num, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef } from '../types.js';

export const chainInfoRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/chain/info',
    tag: 'chain',
    summary: 'Chain summary: height, supply, rewards, mempool, window',
    response: obj({
      chain_id: int(),
      height: int(),
      total_blocks: int(),
      active_validators: int(),
      circulating_supply_native: num('coins: minted - burned'),
      max_supply_native: num('coins; 315000000 from the tokenomics-v2 fork, 210000000 before'),
      next_block_reward_native: num('coins'),
      total_minted_native: num('coins'),
      total_burned_native: num('coins'),
      mempool_size: int(),
      deployed_tokens: int(),
      window_is_partial: bool('the in-memory block window does not reach genesis'),
      window_start_block: int('oldest block held in memory'),
    }),
    handler: async (ctx) => ({ body: await chainInfo(ctx) }),
  },
  {
    method: 'GET',
    path: '/chain/validate',
    tag: 'chain',
    summary: 'Full-chain validation by re-execution from genesis (slow; concurrent calls share one run)',
    response: obj({
      valid: bool(),
      checked_blocks: int(),
      height: int('last height checked'),
      first_bad_height: nullable(int()),
      rule: nullable(str('the block-validity rule that failed first (docs/validity.md), or invariant')),
      error: nullable(str()),
      elapsed_ms: int(),
    }),
    handler: async (ctx) => ({ body: await validateChainShared(ctx) }),
  },
  {
    method: 'GET',
    path: '/chain/state-root/:height',
    tag: 'chain',
    summary: 'State root committed by the block at height',
    params: { height: S.heightParam },
    statuses: { 404: 'no block at that height' },
    response: obj({ height: int(), state_root: hash(), block_hash: hash() }),
    handler: async (ctx, _req, p) => ({ body: await stateRootAt(ctx, heightParam(p.height)) }),
  },
  {
    method: 'GET',
    path: '/chain/performance',
    tag: 'chain',
    summary: 'Average block time (recent window) and transactions per second over 1 h and 24 h',
    response: obj({
      blocks: int('blocks in the average block time sample (newest first, up to 1000 from the in-memory window)'),
      avg_block_time_ms: int(),
      tps_1h: num(),
      tps_24h: num(),
      last_block_time: int('Unix seconds'),
      avg_round: num('mean BFT round of the sampled blocks (0: all decided in round 0)'),
      blocks_after_round_0: int('sampled blocks decided after their first round'),
      finality_lag_blocks: int('head minus finalized height (every committed block is final: 0)'),
    }),
    handler: async (ctx) => ({ body: await chainPerformance(ctx) }),
  },
];
