/**
 * A native.v1 client built only from proto/native/v1/native.proto with @grpc/grpc-js + @grpc/proto-loader,
 * as any third-party client would build it (no code of the node's own).
 */
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

export const PROTO_FILE = fileURLToPath(new URL('../../../proto/native/v1/native.proto', import.meta.url));

export const packageDefinition = loadSync(PROTO_FILE, { longs: String, enums: String, defaults: true, oneofs: true });
const pkg = grpc.loadPackageDefinition(packageDefinition) as any;
export const NativeClient: grpc.ServiceClientConstructor = pkg.native.v1.Native;

export type Client = grpc.Client & Record<string, any>;

export function connect(port: number, creds = grpc.credentials.createInsecure(), options: grpc.ChannelOptions = {}): Client {
  return new NativeClient(`127.0.0.1:${port}`, creds, options) as Client;
}

export interface CallResult<T = any> {
  value?: T;
  error?: grpc.ServiceError;
}

/** One unary call; resolves with the answer or the error (never rejects). */
export function unary<T = any>(
  client: Client,
  method: string,
  request: object,
  opts: { deadlineMs?: number; metadata?: grpc.Metadata } = {},
): Promise<CallResult<T>> {
  const callOpts: grpc.CallOptions = opts.deadlineMs ? { deadline: Date.now() + opts.deadlineMs } : {};
  return new Promise((resolve) => {
    client[method](request, opts.metadata ?? new grpc.Metadata(), callOpts, (error: grpc.ServiceError | null, value: T) =>
      resolve(error ? { error } : { value }),
    );
  });
}

export const hexBytes = (hex: string): Buffer => Buffer.from(hex.replace(/^0x/, ''), 'hex');
export const bytesHex = (b: Buffer | Uint8Array | null | undefined): string => (b ? Buffer.from(b).toString('hex') : '');

/** Collects a stream's events until `done(events)` says so (then cancels) or the stream ends. */
export function collect(
  stream: grpc.ClientReadableStream<any>,
  done: (events: any[]) => boolean,
): Promise<{ events: any[]; error?: grpc.ServiceError }> {
  const events: any[] = [];
  return new Promise((resolve) => {
    let finished = false;
    const finish = (error?: grpc.ServiceError) => {
      if (finished) return;
      finished = true;
      resolve({ events, error });
    };
    stream.on('data', (e) => {
      if (finished) return;
      events.push(e);
      if (done(events)) {
        finish();
        stream.cancel();
      }
    });
    stream.on('error', (err: grpc.ServiceError) => finish(err));
    stream.on('end', () => finish());
  });
}

export { grpc };
