/**
 * JSON-RPC over WebSocket at `/rpc` (and `/`, as POST / mirrors POST /rpc) on the API port: every method
 * POST /rpc serves, plus eth_subscribe / eth_unsubscribe. The upgrade is checked like POST /rpc (API key,
 * CORS origin, rate limit) and every message counts against the client's write bucket, as a POST /rpc does.
 * Limits per connection: message size, requests in flight, subscriptions (rpc/subscriptions.ts), and bytes
 * queued for a slow reader (the HTTP layer drops the connection beyond them).
 */
import type { HttpRequest, WsEndpoint, WsHandlers } from '../http/index.js';
import { ConnectionSubscriptions, type RpcCaller, type RpcOutcome, serializeRpc } from '../rpc/index.js';
import type { NodeContext } from '../services/index.js';
import { parseJsonExact, stringifyExact } from '../util/index.js';
import { apiKeyMatches } from './handler.js';
import { ClientIpResolver, type RateLimiter } from './limits.js';
import { type RpcDispatchers, unhookedRpcDispatchers } from './routes/rpc.js';

export interface WsLimits {
  /** Largest message a client may send (the HTTP body limit by default). */
  maxMessageBytes: number;
  /** Bytes queued for a client that does not read before it is dropped. */
  maxBufferedBytes: number;
  /** Open WebSocket connections on the node. */
  maxConnections: number;
  /** Requests of one connection being answered at once; beyond, -32005 until some finish. */
  maxInFlight: number;
  idleTimeoutSecs: number;
}

export const DEFAULT_WS_LIMITS: WsLimits = {
  maxMessageBytes: 1_048_576,
  maxBufferedBytes: 16 * 1_048_576,
  maxConnections: 1_000,
  maxInFlight: 64,
  idleTimeoutSecs: 120,
};

export interface RpcWebSocketOptions {
  apiKey?: string;
  corsOrigin?: string;
  trustedProxies?: readonly string[];
  /** The limiter POST /rpc uses (shared buckets); null = no rate limits. */
  limiter?: RateLimiter | null;
  limits?: Partial<WsLimits>;
  /** The node's JSON-RPC dispatchers, the ones its POST /rpc uses (its metrics and error log). */
  rpc?: RpcDispatchers;
}

/** The answer's ids, for an error sent in place of answers (a refused message still names its requests). */
function idsOf(data: Buffer): unknown[] {
  try {
    const parsed = parseJsonExact(data.toString('utf8'));
    const items = Array.isArray(parsed) ? parsed : [parsed];
    return items.map((r) => (r && typeof r === 'object' && 'id' in r ? (r as { id: unknown }).id : null));
  } catch {
    return [null];
  }
}

function refusal(data: Buffer, code: number, message: string): string {
  const errors = idsOf(data).map((id) => ({ jsonrpc: '2.0', id, error: { code, message } }));
  return stringifyExact(errors.length === 1 ? errors[0] : errors);
}

/** Subscription ids an answer carries (eth_subscribe results), so their notifications may start. */
function answeredIds(out: RpcOutcome): string[] {
  if (out === null) return [];
  const list = Array.isArray(out) ? out : [out];
  return list.filter((r) => typeof r.result === 'string').map((r) => r.result as string);
}

let connections = 0;

export function rpcWebSocket(ctx: NodeContext, opts: RpcWebSocketOptions = {}): WsEndpoint {
  const limits = { ...DEFAULT_WS_LIMITS, ...opts.limits };
  const clientIp = new ClientIpResolver(opts.trustedProxies ?? []);
  const limiter = opts.limiter ?? null;
  const rpc = opts.rpc ?? unhookedRpcDispatchers;
  const ipOf = (req: HttpRequest) => clientIp.resolve(req.ip, req.headers['x-forwarded-for']);

  return {
    paths: ['/rpc', '/'],
    maxMessageBytes: limits.maxMessageBytes,
    maxBufferedBytes: limits.maxBufferedBytes,
    maxConnections: limits.maxConnections,
    idleTimeoutSecs: limits.idleTimeoutSecs,
    authorize(req) {
      if (opts.apiKey && !apiKeyMatches(opts.apiKey, req.headers['x-api-key'])) return 401;
      // Browsers send Origin on an upgrade and do not apply CORS to WebSockets: the node checks it.
      const origin = req.headers.origin;
      if (origin !== undefined && opts.corsOrigin !== '*' && origin !== opts.corsOrigin) return 403;
      if (limiter?.check(ipOf(req), false)) return 429;
      return null;
    },
    open(conn, req): WsHandlers {
      const client = `ws:${++connections}`;
      const ip = ipOf(req);
      const subs = new ConnectionSubscriptions({
        send: (text) => conn.send(text),
        // A lagging subscription means the client reads slower than the chain produces: drop it.
        drop: (reason) => conn.close(1008, reason.slice(0, 120)),
      });
      const caller: RpcCaller = { client: () => client, subscriptions: subs };
      let inFlight = 0;
      const answer = (out: RpcOutcome) => {
        if (out === null) return;
        conn.send(serializeRpc(out));
        for (const id of answeredIds(out)) subs.arm(id);
      };
      return {
        message(data) {
          const limited = limiter?.check(ip, true);
          if (limited) {
            conn.send(refusal(data, -32005, `rate limit exceeded: ${limited.limit} requests per ${limiter?.windowSecs} s`));
            return;
          }
          if (inFlight >= limits.maxInFlight) {
            conn.send(refusal(data, -32005, `too many requests in flight: at most ${limits.maxInFlight} per connection`));
            return;
          }
          const out = rpc.of(ctx).handleBody(data, caller);
          if (!(out instanceof Promise)) return answer(out);
          inFlight++;
          out.then(answer).finally(() => inFlight--);
        },
        closed() {
          subs.closeAll();
          ctx.filters?.removeClient(client);
        },
      };
    },
  };
}
