import { accountRoutes } from './routes/accounts.js';
import { chainRoutes } from './routes/chain.js';
import { opsRoutes } from './routes/ops.js';
import { rpcRoutes } from './routes/rpc.js';
import { transactionRoutes } from './routes/transactions.js';
import type { RouteDef } from './types.js';

export { createApiHandler, apiKeyMatches, errorResult, type ApiOptions } from './handler.js';
export type { ApiResult, RouteDef, RouteHandler } from './types.js';

/** Every REST route of the node. */
export const restRoutes: RouteDef[] = [...opsRoutes, ...chainRoutes, ...accountRoutes, ...transactionRoutes, ...rpcRoutes];
