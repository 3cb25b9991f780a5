import { health, nativeStatus } from '../../services/index.js';
import { bool, hash, int, literal, obj, str } from '../schema.js';
import type { RouteDef } from '../types.js';

export const opsRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/health',
    tag: 'ops',
    summary: 'Liveness',
    response: obj({ status: literal('ok'), node: str('node name') }),
    handler: (ctx) => ({ body: health(ctx) }),
  },
  {
    method: 'GET',
    path: '/native_status',
    tag: 'ops',
    summary: 'Version, chain, consensus phase, sync state, validators, uptime',
    response: obj({
      version: obj({ version: str(), build: str('commit id or unknown') }),
      chain_id: int(),
      consensus: str('PoA or DPoS+BFT'),
      native_token: str(),
      sync_info: obj({
        latest_block_height: int(),
        latest_block_hash: hash(),
        latest_block_time: int(),
        earliest_block_height: int(),
        syncing: bool(),
      }),
      validators: obj({ active_count: int() }),
      uptime_seconds: int(),
    }),
    handler: (ctx) => ({ body: nativeStatus(ctx) }),
  },
];
