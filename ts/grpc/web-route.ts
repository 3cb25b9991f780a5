/**
 * What the main HTTP port needs to route gRPC-Web before the gRPC modules load (~0.1 s of CPU: grpc-js,
 * protobuf-es and the generated schemas, which a node loads after its API listens, ts/node/grpc-wiring.ts):
 * the path prefix, the request headers to copy, and the router. Imports nothing.
 */
import type { HttpHandler } from '../http/index.js';

/** Paths served by gRPC-Web: the methods of native.v1.Native (its typeName; a test keeps the two equal). */
export const GRPC_WEB_PATH_PREFIX = '/native.v1.Native/';

/** Request headers the handler reads (the uWS backend copies only the headers it is told about). */
export const GRPC_WEB_REQUEST_HEADERS: readonly string[] = ['content-type', 'grpc-timeout', 'grpc-encoding'];

/** `next` with gRPC-Web in front: requests under GRPC_WEB_PATH_PREFIX go to `grpcWeb`, the rest to `next`. */
export function withGrpcWeb(grpcWeb: HttpHandler, next: HttpHandler): HttpHandler {
  return (req) => (req.path.startsWith(GRPC_WEB_PATH_PREFIX) ? grpcWeb(req) : next(req));
}
