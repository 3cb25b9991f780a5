import { openApiRoute } from './openapi.js';
import { accountRoutes } from './routes/accounts.js';
import { addressRoutes } from './routes/addresses.js';
import { adminRoutes } from './routes/admin.js';
import { chainInfoRoutes } from './routes/chain-info.js';
import { chainRoutes } from './routes/chain.js';
import { consensusRoutes } from './routes/consensus.js';
import { explorerRouteDefs } from './routes/explorer.js';
import { metricsRoutes } from './routes/metrics.js';
import { nftRoutes } from './routes/nft.js';
import { opsRoutes } from './routes/ops.js';
import { readyRoutes } from './routes/ready.js';
import { recentTransactionRoutes } from './routes/recent-transactions.js';
import { rootRoutes } from './routes/root.js';
import { rpcRoutes } from './routes/rpc.js';
import { stakingRoutes } from './routes/staking.js';
import { statsRoutes } from './routes/stats.js';
import { tokenRoutes } from './routes/tokens.js';
import { transactionRoutes } from './routes/transactions.js';
import { validatorRoutes } from './routes/validators.js';
import { verifyApiRoutes } from './routes/verify.js';
import type { RouteDef } from './types.js';

export { ApiKeyRegistry, ApiKeysFileError, parseApiKeys } from './api-keys.js';
export { httpStatusOf } from './error-status.js';
export type { KeyHooks } from './key-gate.js';
export { createApiHandler, apiKeyMatches, apiRequestHeaders, createLimiter, errorResult, type ApiOptions } from './handler.js';
export { DEFAULT_WS_LIMITS, type WsLimits, rpcWebSocket } from './ws.js';
export type { ApiResult, RouteDef, RouteHandler } from './types.js';

/** Every REST route of the node. */
export const restRoutes: RouteDef[] = [
  ...rootRoutes,
  ...opsRoutes,
  ...readyRoutes,
  ...chainRoutes,
  ...chainInfoRoutes,
  ...consensusRoutes,
  ...accountRoutes,
  ...addressRoutes,
  ...transactionRoutes,
  ...recentTransactionRoutes,
  ...tokenRoutes,
  ...nftRoutes,
  ...validatorRoutes,
  ...stakingRoutes,
  ...statsRoutes,
  ...rpcRoutes,
  ...metricsRoutes,
  ...adminRoutes,
  ...verifyApiRoutes,
  ...explorerRouteDefs,
];
restRoutes.push(openApiRoute(restRoutes));
export {
  DEFAULT_RATE_LIMIT_GLOBAL,
  DEFAULT_RATE_LIMIT_WINDOW_SECS,
  DEFAULT_RATE_LIMIT_WRITE,
  ClientIpResolver,
} from './limits.js';
export { explorerHooks } from './routes/explorer.js';
export { dispatcherOf, rpcHooks } from './routes/rpc.js';
