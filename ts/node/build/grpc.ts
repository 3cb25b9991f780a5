/**
 * gRPC: loaded after the API listens (grpc-wiring.ts: grpc-js, protobuf-es and the schemas cost ~0.1 s that
 * /health should not wait for). gRPC-Web rides on the API port from the start: a request before the load
 * waits for it. With --grpc-port, the HTTP/2 server listens once the API does.
 */
import type { Logger } from 'pino';
import type { GrpcServer } from '../../grpc/index.js';
import type { HttpHandler } from '../../http/index.js';
import type { NodeMetrics } from '../../metrics/index.js';
import type { NodeContext } from '../../services/index.js';
import type { NodeConfig } from '../config.js';
import type { GrpcWiring } from '../grpc-wiring.js';
import type { Built } from './stops.js';

export interface GrpcLoader {
  /** The gRPC-Web handler for the API port; loads gRPC on its first request. */
  web: HttpHandler;
  load(): Promise<GrpcWiring>;
  /** Ends gRPC-Web streams when the node stops. */
  webStop: AbortController;
}

/** gRPC of this node, not loaded yet. */
export function grpcLoader(ctx: NodeContext, metrics: NodeMetrics, log: Logger): GrpcLoader {
  const webStop = new AbortController();
  let loading: Promise<GrpcWiring> | undefined;
  const load = () => {
    loading ??= import('../grpc-wiring.js').then((w) => w.wireGrpc(ctx, metrics, log, webStop.signal));
    return loading;
  };
  let web: HttpHandler | undefined;
  return { web: (req) => (web ? web(req) : load().then((g) => (web = g.web)(req))), load, webStop };
}

/** The HTTP/2 server with --grpc-port (null with it off); stopping also ends the gRPC-Web streams. */
export async function buildGrpc(
  config: NodeConfig,
  loader: GrpcLoader,
  log: Logger,
): Promise<Built<{ grpc: GrpcServer | null }>> {
  let grpc: GrpcServer | null = null;
  try {
    if (config.grpcPort !== null) grpc = await (await loader.load()).listen(config, log);
  } catch (err) {
    loader.webStop.abort();
    throw err;
  }
  return {
    grpc,
    stop: async () => {
      loader.webStop.abort();
      await grpc?.close();
      // gRPC-Web streams write their UNAVAILABLE trailers once their pump sees the abort: a turn of the loop.
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}
