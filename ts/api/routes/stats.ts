import { dailyStats } from '../../services/index.js';
import { STATS_DAYS } from '../../indexes/index.js';
import { arr, bool, int, nullable, obj, str } from '../schema.js';
import * as S from '../schemas.js';
import type { RouteDef } from '../types.js';

export const statsRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/stats/daily',
    tag: 'stats',
    summary: `Daily aggregates of the last ${STATS_DAYS} UTC days, today (partial) first`,
    response: obj({
      days: arr(
        obj({
          date: str('YYYY-MM-DD (UTC)'),
          day_start: int('Unix seconds'),
          blocks: int(),
          tx_count: int(),
          new_addresses: nullable(int('addresses whose first transaction is on this day')),
          active_addresses: int('distinct senders and recipients'),
          avg_block_time_ms: nullable(int()),
          complete: bool('every block of the day is indexed'),
        }),
      ),
      coverage: S.coverage,
    }),
    handler: async (ctx) => ({ body: await dailyStats(ctx) }),
  },
];
