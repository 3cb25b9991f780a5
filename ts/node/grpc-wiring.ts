/**
 * The node's gRPC transport, loaded after its API listens (grpc-js, protobuf-es and the generated schemas cost
 * ~0.1 s of CPU that /health should not wait for): the service over the node's context, its gRPC-Web handler on
 * the API port and, with --grpc-port, the HTTP/2 server. node.ts imports this module on first need.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import { GrpcMetrics, type GrpcServer, NativeGrpcService, createGrpcWebHandler, startGrpcServer } from '../grpc/index.js';
import type { HttpHandler } from '../http/index.js';
import type { NodeMetrics } from '../metrics/index.js';
import type { NodeContext } from '../services/index.js';
import type { NodeConfig } from './config.js';

/** The gRPC server's TLS files (--grpc-tls-cert / --grpc-tls-key), read at start; undefined = plaintext. */
function grpcTls(c: NodeConfig): { cert: Buffer; key: Buffer } | undefined {
  if (!c.grpcTlsCert || !c.grpcTlsKey) return undefined;
  const read = (file: string, flag: string): Buffer => {
    try {
      return readFileSync(file);
    } catch (err) {
      throw new Error(`cannot read ${flag} ${file}: ${(err as Error).message}`);
    }
  };
  return { cert: read(c.grpcTlsCert, '--grpc-tls-cert'), key: read(c.grpcTlsKey, '--grpc-tls-key') };
}

export interface GrpcWiring {
  /** gRPC-Web on the API port (requests under GRPC_WEB_PATH_PREFIX). */
  web: HttpHandler;
  /** The HTTP/2 server on `config.grpcPort` (the caller checks it is not off). */
  listen(config: NodeConfig, log: Logger): Promise<GrpcServer>;
}

/** The gRPC service of this node; gRPC-Web streams end when `webStop` aborts. */
export function wireGrpc(ctx: NodeContext, metrics: NodeMetrics, log: Logger, webStop: AbortSignal): GrpcWiring {
  const service = new NativeGrpcService(ctx, {
    metrics: new GrpcMetrics(metrics.registry),
    onError: (err, method) => log.error({ err, method }, 'gRPC method failed'),
  });
  return {
    web: createGrpcWebHandler(service, { signal: webStop }),
    async listen(config, log) {
      const server = await startGrpcServer(service, {
        host: config.apiHost,
        port: config.grpcPort as number,
        tls: grpcTls(config),
        reflection: config.grpcReflection,
      });
      log.info(
        { host: config.apiHost, port: server.port, tls: server.tls, reflection: config.grpcReflection },
        'gRPC listening (native.v1; gRPC-Web on the API port)',
      );
      return server;
    },
  };
}
