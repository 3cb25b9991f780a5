import { rootInfo } from '../../services/index.js';
import { obj, str, int } from '../schema.js';
import type { RouteDef } from '../types.js';

const paths = (keys: string[]) => obj(Object.fromEntries(keys.map((k) => [k, str('canonical path')])));

export const rootRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/',
    tag: 'ops',
    summary: 'What this node is and where each resource lives',
    response: obj({
      name: str(),
      version: str(),
      chain_id: int(),
      consensus: str('PoA or DPoS+BFT'),
      native_token: str('ticker of the native coin'),
      docs: obj({
        rpc_jsonrpc: str('canonical path'),
        rest: paths(['chain_info', 'blocks', 'transactions', 'accounts', 'tokens', 'validators', 'staking', 'epoch', 'mempool']),
        ops: paths(['health', 'metrics', 'explorer_builtin']),
      }),
      jsonrpc_namespaces: obj(Object.fromEntries(['eth_', 'net_', 'web3_', 'native_'].map((k) => [k, str('description')]))),
    }),
    handler: (ctx) => ({ body: rootInfo(ctx) }),
  },
];
