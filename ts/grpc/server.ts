/**
 * The HTTP/2 gRPC server (@grpc/grpc-js) of native.v1.Native: plaintext or TLS, optional server reflection,
 * message size limits, deadlines. Messages cross it as bytes; NativeGrpcService decodes and encodes them.
 */
import { createServer } from 'node:net';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { ListenError } from '../http/index.js';
import { GrpcError, GrpcStatus } from './errors.js';
import type { GrpcMethod } from './methods.js';
import { NATIVE_METHODS } from './methods.js';
import type { NativeGrpcService } from './service.js';
import { asBuffer } from './shapes.js';

/** The schema file clients build from (shipped with the node; reflection serves it when enabled). */
export const NATIVE_PROTO_PATH = fileURLToPath(new URL('../../../proto/native/v1/native.proto', import.meta.url));

/** Largest request message: requests are small (a transaction is at most ~130 KB); same as the HTTP body limit. */
export const DEFAULT_MAX_RECEIVE_MESSAGE_BYTES = 1_048_576;
/** Largest answer: a full block (20,000 transactions) fits with room to spare. */
export const DEFAULT_MAX_SEND_MESSAGE_BYTES = 64 * 1_048_576;
/** How long a stopping server lets calls finish before it drops the connections. */
const SHUTDOWN_GRACE_MS = 2_000;

export interface GrpcServerOptions {
  host: string;
  /** 0 = ephemeral; the chosen one is GrpcServer.port. */
  port: number;
  /** PEM certificate chain and key: TLS; absent: plaintext. */
  tls?: { cert: Buffer; key: Buffer };
  /** Serve grpc.reflection (v1 and v1alpha); off by default, as the spec's endpoints. */
  reflection?: boolean;
  maxReceiveMessageBytes?: number;
  maxSendMessageBytes?: number;
}

export interface GrpcServer {
  readonly port: number;
  readonly tls: boolean;
  /** Ends open streams with UNAVAILABLE, lets unary calls finish briefly, then closes. Idempotent. */
  close(): Promise<void>;
}

/** grpc-js hands messages over as Buffers; answers are already encoded. */
const identity = (b: Buffer): Buffer => b;

function serviceDefinition(): grpc.ServiceDefinition {
  const def: Record<string, grpc.MethodDefinition<Buffer, Uint8Array>> = {};
  for (const [path, m] of NATIVE_METHODS) {
    def[m.desc.name] = {
      path,
      originalName: m.desc.localName,
      requestStream: false,
      responseStream: m.kind === 'server_streaming',
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: asBuffer,
      responseDeserialize: identity,
    };
  }
  return def as grpc.ServiceDefinition;
}

function grpcStatusObject(err: GrpcError): Partial<grpc.StatusObject> {
  const metadata = new grpc.Metadata();
  for (const [k, v] of Object.entries(err.metadata)) metadata.set(k, v);
  return { code: err.code, details: err.message, metadata };
}

/**
 * A call's cancellation: aborts when the client cancels, the call's deadline passes or the server stops, and
 * says which. The AbortSignal is made only when a handler asks for it (unary handlers rarely do), and the
 * call is watched (a cancel listener, a deadline timer) only once there is work to stop: at once for a
 * stream, for a unary call only when its answer is not ready synchronously (most are).
 */
class CallControl {
  private controller: AbortController | null = null;
  private timer: NodeJS.Timeout | undefined;
  private finished = false;
  reason: 'cancelled' | 'deadline' | 'shutdown' | null = null;

  constructor(private readonly call: grpc.ServerUnaryCall<Buffer, Uint8Array> | grpc.ServerWritableStream<Buffer, Uint8Array>) {}

  /** Starts listening for the client's cancel and the deadline. */
  watch(): void {
    const call = this.call;
    // grpc-js also reports a call's stream closing after the answer as a cancel: done() makes that a no-op.
    call.once('cancelled', () => this.abort('cancelled'));
    if (call.cancelled) this.abort('cancelled');
    const deadline = call.getDeadline();
    const at = deadline instanceof Date ? deadline.getTime() : deadline;
    if (Number.isFinite(at)) {
      // grpc-js answers DEADLINE_EXCEEDED itself; this stops the work behind the call too.
      this.timer = setTimeout(() => this.abort('deadline'), Math.max(0, at - Date.now()));
    }
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(reason: 'cancelled' | 'deadline' | 'shutdown'): void {
    if (this.reason || this.finished) return;
    this.reason = reason;
    this.clearTimer();
    this.controller?.abort();
  }

  /** The call is answered: later cancels and deadlines change nothing. */
  done(): void {
    this.finished = true;
    this.clearTimer();
  }

  private clearTimer(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Status of a call that ended because its signal aborted. */
  endStatus(): GrpcStatus {
    if (this.reason === 'deadline') return GrpcStatus.DEADLINE_EXCEEDED;
    if (this.reason === 'shutdown') return GrpcStatus.UNAVAILABLE;
    return GrpcStatus.CANCELLED;
  }
}

export async function startGrpcServer(service: NativeGrpcService, opts: GrpcServerOptions): Promise<GrpcServer> {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': opts.maxReceiveMessageBytes ?? DEFAULT_MAX_RECEIVE_MESSAGE_BYTES,
    'grpc.max_send_message_length': opts.maxSendMessageBytes ?? DEFAULT_MAX_SEND_MESSAGE_BYTES,
    // Channelz keeps per-call statistics nobody here reads; it costs on every call.
    'grpc.enable_channelz': 0,
  });
  const open = new Set<CallControl>();

  const unary = (m: Extract<GrpcMethod, { kind: 'unary' }>): grpc.handleUnaryCall<Buffer, Uint8Array> => {
    return (call, callback) => {
      const t0 = performance.now();
      const control = new CallControl(call);
      const ok = (answer: Uint8Array) => {
        control.done();
        service.finished(m, 'grpc', control.reason ? control.endStatus() : GrpcStatus.OK, (performance.now() - t0) / 1000);
        callback(null, answer);
      };
      const fail = (err: unknown) => {
        control.done();
        const e = err instanceof GrpcError ? err : service.failure(err, m);
        service.finished(m, 'grpc', control.reason ? control.endStatus() : e.code, (performance.now() - t0) / 1000);
        callback(grpcStatusObject(e));
      };
      let out: Uint8Array | Promise<Uint8Array>;
      try {
        out = service.unary(m, call.request, control);
      } catch (err) {
        fail(err);
        return;
      }
      if (out instanceof Promise) {
        control.watch();
        out.then(ok, fail);
      } else ok(out);
    };
  };

  const streaming = (
    m: Extract<GrpcMethod, { kind: 'server_streaming' }>,
  ): grpc.handleServerStreamingCall<Buffer, Uint8Array> => {
    return (call) => {
      const control = new CallControl(call);
      control.watch();
      open.add(control);
      const sink = {
        // The headers leave when the stream opens rather than with its first event: clients see the call
        // accepted at once, and a fan-out's first event costs every stream a DATA frame only.
        opened: () => call.sendMetadata(new grpc.Metadata()),
        write: (messages: Uint8Array[]) => {
          let ok = true;
          for (const message of messages) ok = call.write(message) && ok;
          return ok;
        },
        drained: () =>
          new Promise<void>((resolve) => {
            const signal = control.signal;
            if (signal.aborted) return resolve();
            const done = () => {
              call.off('drain', done);
              signal.removeEventListener('abort', done);
              resolve();
            };
            call.on('drain', done);
            signal.addEventListener('abort', done, { once: true });
          }),
      };
      const finish = (err: GrpcError) => {
        control.done();
        open.delete(control);
        service.finished(m, 'grpc', err.code, null);
        if (!call.cancelled) call.emit('error', grpcStatusObject(err));
      };
      service.stream(m, call.request, control, sink, 'grpc').then(
        () => {
          const code = control.reason ? control.endStatus() : GrpcStatus.OK;
          finish(new GrpcError(code, code === GrpcStatus.UNAVAILABLE ? 'server is shutting down' : GrpcStatus[code]));
        },
        (err: GrpcError) => finish(err instanceof GrpcError ? err : service.failure(err, m)),
      );
    };
  };

  const impl: grpc.UntypedServiceImplementation = {};
  for (const m of NATIVE_METHODS.values()) impl[m.desc.name] = m.kind === 'unary' ? unary(m) : streaming(m);
  server.addService(serviceDefinition(), impl);
  if (opts.reflection) {
    // Loaded only when asked for (off by default): it brings its own protobufjs and the .proto parser.
    const [{ loadSync }, { ReflectionService }] = await Promise.all([import('@grpc/proto-loader'), import('@grpc/reflection')]);
    new ReflectionService(loadSync(NATIVE_PROTO_PATH)).addToServer(server);
  }

  const creds = opts.tls
    ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: opts.tls.cert, private_key: opts.tls.key }], false)
    : grpc.ServerCredentials.createInsecure();
  const address = opts.host.includes(':') ? `[${opts.host}]:${opts.port}` : `${opts.host}:${opts.port}`;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(address, creds, (err, p) => (err ? bindFailure(opts.host, opts.port).then(reject, reject) : resolve(p)));
  });

  let closing: Promise<void> | undefined;
  return {
    port,
    tls: opts.tls !== undefined,
    close(): Promise<void> {
      closing ??= new Promise<void>((resolve) => {
        for (const c of open) c.abort('shutdown');
        const force = setTimeout(() => server.forceShutdown(), SHUTDOWN_GRACE_MS);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
      return closing;
    },
  };
}

/** grpc-js words a failed bind vaguely; binding the same address with node:net names the cause. */
function bindFailure(host: string, port: number): Promise<ListenError> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) =>
      resolve(new ListenError(err.code ?? 'EUNKNOWN', host, port, '--grpc-port')),
    );
    probe.listen({ host, port, exclusive: true }, () =>
      probe.close(() => resolve(new ListenError('EUNKNOWN', host, port, '--grpc-port'))),
    );
  });
}
