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
import { type RpcDispatchers, rpcRoutes, unhookedRpcDispatchers } from './routes/rpc.js';
import { stakingRoutes } from './routes/staking.js';
import { statsRoutes } from './routes/stats.js';
import { tokenRoutes } from './routes/tokens.js';
import { transactionRoutes } from './routes/transactions.js';
import { validatorRoutes } from './routes/validators.js';
import { verifyApiRoutes } from './routes/verify.js';
import type { VerifyHooks } from '../verify/index.js';
import type { RouteDef } from './types.js';

export { ApiKeyRegistry, ApiKeysFileError, parseApiKeys } from './api-keys.js';
export { httpStatusOf } from './error-status.js';
export type { KeyHooks } from './key-gate.js';
export { createApiHandler, apiKeyMatches, apiRequestHeaders, createLimiter, errorResult, type ApiOptions } from './handler.js';
export { DEFAULT_WS_LIMITS, type WsLimits, rpcWebSocket } from './ws.js';
export type { ApiResult, RouteDef, RouteHandler } from './types.js';

/**
 * What a node's routes report to: passed to apiRoutes (and the same `rpc` to rpcWebSocket) by each node, so
 * two nodes in one process (tests) never share a counter or a log.
 */
export interface ApiRouteOptions {
  /** JSON-RPC dispatchers with the node's call metrics and error log (none: no hooks). */
  rpc?: RpcDispatchers;
  /** An explorer page failed with a 500. */
  onExplorerError?: (err: unknown, path: string) => void;
  /** What the verification routes report (an error they did not expect). */
  verify?: VerifyHooks;
}

/** Every REST route of a node, reporting to `o`. */
export function apiRoutes(o: ApiRouteOptions = {}): RouteDef[] {
  const routes: RouteDef[] = [
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
    ...rpcRoutes(o.rpc ?? unhookedRpcDispatchers),
    ...metricsRoutes,
    ...adminRoutes,
    ...verifyApiRoutes(o.verify),
    ...explorerRouteDefs(o.onExplorerError),
  ];
  routes.push(openApiRoute(routes));
  return routes;
}

/** Every REST route, reporting nowhere (tests and tools that serve a context without a node). */
export const restRoutes: RouteDef[] = apiRoutes();
export {
  DEFAULT_RATE_LIMIT_GLOBAL,
  DEFAULT_RATE_LIMIT_WINDOW_SECS,
  DEFAULT_RATE_LIMIT_WRITE,
  ClientIpResolver,
} from './limits.js';
export { type RpcDispatchers, rpcDispatchers } from './routes/rpc.js';
