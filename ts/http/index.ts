/**
 * One small HTTP server with two interchangeable backends: uWebSockets.js (native, fast) and node:http.
 * Both apply the same rules: concurrency cap (503), body limit (413), handler errors (500), JSON defaults.
 */
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT, defaultLogger, type ServerConfig } from './common.js';
import { startNodeServer } from './node.js';
import type { HttpBackend, HttpHandler, HttpServer, HttpServerOptions } from './types.js';
import { loadUws, startUwsServer } from './uws.js';

export { ListenError } from './types.js';
export type {
  HttpBackend,
  HttpBodyStream,
  HttpHandler,
  HttpLogger,
  HttpRequest,
  HttpResponse,
  HttpServer,
  HttpServerOptions,
  PrefixHeaders,
  WsConnection,
  WsEndpoint,
  WsHandlers,
} from './types.js';

/** True when the uWS binary loads on this platform / Node ABI. */
export function uwsAvailable(): boolean {
  return loadUws().mod !== null;
}

function positiveInt(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
}

export async function startHttpServer(opts: HttpServerOptions, handler: HttpHandler): Promise<HttpServer> {
  if (typeof handler !== 'function') throw new TypeError('handler must be a function');
  if (typeof opts.host !== 'string' || opts.host === '') throw new TypeError('host must be a non-empty string');
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    throw new RangeError('port must be an integer in 0..65535');
  }
  const logger = opts.logger ?? defaultLogger();
  const cfg: ServerConfig = {
    host: opts.host,
    port: opts.port,
    maxBodyBytes: positiveInt(opts.maxBodyBytes, DEFAULT_MAX_BODY_BYTES, 'maxBodyBytes'),
    maxConcurrent: positiveInt(opts.maxConcurrent, DEFAULT_MAX_CONCURRENT, 'maxConcurrent'),
    logger,
    requestHeaders: opts.requestHeaders?.map((h) => h.toLowerCase()),
    prefixHeaders: opts.prefixHeaders?.map((p) => ({ prefix: p.prefix, names: p.names.map((h) => h.toLowerCase()) })),
    websocket: opts.websocket,
  };

  const asked = opts.backend ?? 'auto';
  let wanted: HttpBackend | 'auto' = asked;
  if (asked === 'auto') {
    const env = process.env.NATIVE_HTTP_BACKEND;
    if (env === 'node' || env === 'uws') wanted = env;
    else if (env) logger.warn({ NATIVE_HTTP_BACKEND: env }, 'ignoring unknown NATIVE_HTTP_BACKEND (use node or uws)');
  } else if (asked !== 'node' && asked !== 'uws') {
    throw new TypeError(`unknown http backend ${String(asked)}`);
  }

  let server: HttpServer;
  if (wanted === 'node') {
    server = await startNodeServer(cfg, handler);
  } else {
    const { mod, error } = loadUws();
    if (mod) {
      server = await startUwsServer(mod, cfg, handler);
    } else if (wanted === 'uws') {
      throw new Error(`uWS backend requested but its binary does not load here: ${String(error)}`);
    } else {
      logger.warn({ err: error }, 'uWS binary does not load here; using node:http');
      server = await startNodeServer(cfg, handler);
    }
  }
  logger.info(
    {
      backend: server.backend,
      host: cfg.host,
      port: server.port,
      maxBodyBytes: cfg.maxBodyBytes,
      maxConcurrent: cfg.maxConcurrent,
    },
    `http server listening (${server.backend})`,
  );
  return server;
}
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT } from './common.js';
