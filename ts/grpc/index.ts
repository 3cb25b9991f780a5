/**
 * The gRPC transport, native.v1 (spec: auxiliary interfaces, part C; docs/grpc.md): an HTTP/2 server
 * (@grpc/grpc-js) and gRPC-Web on the main HTTP port, over one transport-neutral service that calls
 * ts/services only. The messages are generated from proto/native/v1/native.proto (scripts/gen-proto.sh).
 */
export { GrpcError, GrpcStatus, REJECT_REASON_TRAILER, toGrpcError } from './errors.js';
export { GrpcMetrics, type GrpcTransport } from './metrics.js';
export { NATIVE_METHODS, type CallInfo, type GrpcMethod } from './methods.js';
export {
  DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
  DEFAULT_MAX_SEND_MESSAGE_BYTES,
  type GrpcServer,
  type GrpcServerOptions,
  NATIVE_PROTO_PATH,
  startGrpcServer,
} from './server.js';
export { DEFAULT_MAX_STREAMS, type GrpcServiceOptions, NativeGrpcService } from './service.js';
export { EventStream, LAG_THRESHOLD, MAX_TOPIC_POSITIONS } from './stream-events.js';
export {
  GRPC_WEB_CORS_HEADERS,
  GRPC_WEB_PATH_PREFIX,
  GRPC_WEB_REQUEST_HEADERS,
  type GrpcWebOptions,
  createGrpcWebHandler,
  encodeGrpcMessage,
  parseGrpcTimeout,
  withGrpcWeb,
} from './web.js';
/** The generated message schemas and the service descriptor (for clients built on @bufbuild/protobuf). */
export * as nativeV1 from './gen/native/v1/native_pb.js';
