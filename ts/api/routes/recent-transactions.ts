import { DEFAULT_TX_PAGE, MAX_TX_PAGE, RECENT_TX_SCAN_BLOCKS, recentTransactions } from '../../services/index.js';
import { arr, int, nullable, obj } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef } from '../types.js';
import { listParams } from './common.js';

export const recentTransactionRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/transactions',
    tag: 'transactions',
    summary: 'Recent confirmed transactions, newest first',
    description: `Covers the latest ${RECENT_TX_SCAN_BLOCKS} blocks; older transactions are reached through blocks, address history or /transactions/{txid}.`,
    query: S.offsetQuery(DEFAULT_TX_PAGE, MAX_TX_PAGE),
    response: obj({
      transactions: arr(S.txView),
      limit: int(),
      offset: int(),
      page: int(),
      next_offset: nullable(int('offset of the next page; null when there is none')),
      scanned_from_height: int('lowest block height scanned'),
    }),
    handler: async (ctx, req) => {
      const { offset, limit } = listParams(req.query, DEFAULT_TX_PAGE, MAX_TX_PAGE);
      return { body: await recentTransactions(ctx, offset, limit) };
    },
  },
];
