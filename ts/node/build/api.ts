/**
 * The HTTP API: REST, JSON-RPC (POST and WebSocket), the explorer, verification and gRPC-Web on one port,
 * with this node's rate limits, keys, readiness and its own hooks (metrics, error logs, audit): nothing of it
 * is process-wide, so two nodes in one process (tests) never count or log each other's requests.
 */
import type { Logger } from 'pino';
import {
  type ApiKeyRegistry,
  type RpcDispatchers,
  apiRequestHeaders,
  apiRoutes,
  createApiHandler,
  createLimiter,
  rpcDispatchers,
  rpcWebSocket,
} from '../../api/index.js';
import { GRPC_WEB_PATH_PREFIX, GRPC_WEB_REQUEST_HEADERS, withGrpcWeb } from '../../grpc/light.js';
import { type HttpHandler, type HttpServer, startHttpServer } from '../../http/index.js';
import type { NodeMetrics } from '../../metrics/index.js';
import type { AuditLog, NodeContext } from '../../services/index.js';
import type { KvStore } from '../../storage/index.js';
import type { NodeConfig } from '../config.js';
import { keyQuotas, readinessSource } from '../fleet.js';
import type { Built } from './stops.js';

export interface ApiParts {
  db: KvStore;
  audit: AuditLog;
  metrics: NodeMetrics;
  /** Set by a drain (SIGTERM): GET /ready answers 503. */
  drainState: { draining: boolean };
  /** gRPC-Web, answered under GRPC_WEB_PATH_PREFIX (build/grpc.ts). */
  grpcWeb: HttpHandler;
  log: Logger;
}

/** Listens on --api-host:--api-port; sets `ctx.readiness`. */
export async function buildApi(
  config: NodeConfig,
  ctx: NodeContext,
  p: ApiParts,
): Promise<Built<{ http: HttpServer; apiKeys: ApiKeyRegistry | null; rpc: RpcDispatchers }>> {
  const { metrics: m, log } = p;
  const rpc = rpcDispatchers({
    onCall: (method, ok, seconds) => m.recordRpcCall(method, ok, seconds),
    onInternalError: (err, method) => log.error({ err, method }, 'JSON-RPC method failed'),
  });
  const routes = apiRoutes({
    rpc,
    onExplorerError: (err, path) => log.error({ err, path }, 'explorer page failed'),
    verify: { onError: (err, where) => log.error({ err, where }, 'verification request failed') },
  });
  const { apiKeys, keyHooks } = keyQuotas(config, log, m.registry);
  ctx.readiness = readinessSource(config, p.db, p.drainState);
  // One limiter for POST /rpc and WebSocket messages: a client's budget is the same on both.
  const limiter = createLimiter({
    global: config.rateLimitGlobal,
    write: config.rateLimitWrite,
    windowSecs: config.rateLimitWindowSecs,
  });
  const handler = createApiHandler(ctx, routes, {
    apiKey: config.apiKey,
    corsOrigin: config.corsOrigin,
    limiter,
    trustedProxies: config.trustedProxies,
    onError: (err, req) => log.error({ err, path: req.path }, 'request failed'),
    onAuthFailure: (f) => {
      m.authFailure(f.route);
      p.audit.record('auth_failure', { ip: f.ip, method: f.method, path: f.path, reason: f.reason });
    },
    onRateLimited: (bucket) => m.rateLimit(bucket),
    onResponse: (method, route, status, seconds) => m.observeHttp(method, route, status, seconds),
    apiKeys,
    keyHooks,
  });
  const http = await startHttpServer(
    {
      host: config.apiHost,
      port: config.apiPort,
      backend: config.httpBackend,
      maxBodyBytes: config.maxBodyBytes,
      maxConcurrent: config.maxConcurrent,
      logger: log,
      requestHeaders: apiRequestHeaders(config),
      prefixHeaders: [{ prefix: GRPC_WEB_PATH_PREFIX, names: GRPC_WEB_REQUEST_HEADERS }],
      websocket: config.ws
        ? rpcWebSocket(ctx, {
            apiKey: config.apiKey,
            corsOrigin: config.corsOrigin,
            trustedProxies: config.trustedProxies,
            limiter,
            rpc,
            limits: {
              maxConnections: config.wsMaxConnections,
              maxBufferedBytes: config.wsMaxBufferedBytes,
              maxMessageBytes: config.maxBodyBytes,
            },
          })
        : undefined,
    },
    withGrpcWeb(p.grpcWeb, handler),
  );
  return { http, apiKeys, rpc, stop: () => http.close() };
}
