/**
 * Reference servers for the gRPC bench (bench/grpc.ts): gRPC over HTTP/2 with no node logic, answering every
 * unary call on any path with one constant, pre-encoded message (the size of a GetBalance answer), so their
 * requests/s are the ceiling of each stack on this machine:
 * - `grpc-js`: @grpc/grpc-js with the node's server options (ts/grpc/server.ts), a handler that answers at once;
 * - `http2`: node:http2 alone, framing the message and the grpc-status trailer by hand (the transport's floor).
 * Prints `listening <port>` once ready. Usage: node dist/bench/grpc-bare-server.js grpc-js|http2
 */
import { createServer } from 'node:http2';
import * as grpc from '@grpc/grpc-js';
import { DEFAULT_MAX_RECEIVE_MESSAGE_BYTES, DEFAULT_MAX_SEND_MESSAGE_BYTES } from '../ts/grpc/index.js';

/** A GetBalance answer's size: 80 bytes. */
const ANSWER = Buffer.alloc(80, 0x2a);
const PATHS = ['/native.v1.Native/GetBlock', '/native.v1.Native/GetBalance'];

const ready = (port: number) => process.stdout.write(`listening ${port}\n`);
const mode = process.argv[2];

if (mode === 'grpc-js') {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
    'grpc.max_send_message_length': DEFAULT_MAX_SEND_MESSAGE_BYTES,
    'grpc.enable_channelz': 0,
  });
  const identity = (b: Buffer) => b;
  const definition: Record<string, grpc.MethodDefinition<Buffer, Buffer>> = {};
  const impl: grpc.UntypedServiceImplementation = {};
  for (const path of PATHS) {
    const name = path.slice(path.lastIndexOf('/') + 1);
    definition[name] = {
      path,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    };
    impl[name] = ((_call, callback) => callback(null, ANSWER)) as grpc.handleUnaryCall<Buffer, Buffer>;
  }
  server.addService(definition as grpc.ServiceDefinition, impl);
  server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (err, port) => {
    if (err) throw err;
    ready(port);
  });
} else if (mode === 'http2') {
  const framed = Buffer.alloc(5 + ANSWER.length);
  framed.writeUInt32BE(ANSWER.length, 1);
  framed.set(ANSWER, 5);
  const server = createServer();
  server.on('stream', (stream) => {
    stream.on('data', () => undefined);
    stream.on('end', () => {
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      stream.end(framed);
    });
    stream.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    ready(typeof addr === 'object' && addr ? addr.port : 0);
  });
} else {
  process.stderr.write('usage: grpc-bare-server.js grpc-js|http2\n');
  process.exit(2);
}
process.on('SIGTERM', () => process.exit(0));
