/**
 * The light door of ts/grpc/: the gRPC-Web route (its path prefix and headers), which the API serves before gRPC loads, importable before the folder itself loads (the flag table and the
 * command read them before anything else; docs/architecture.md, "Doors and layers"). Imports nothing heavy.
 */
export { GRPC_WEB_PATH_PREFIX, GRPC_WEB_REQUEST_HEADERS, withGrpcWeb } from './web-route.js';
