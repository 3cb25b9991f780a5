/**
 * The transport-neutral core of the gRPC service: request decoding, the method table, answer encoding,
 * stream pumping with back-pressure, the open-stream limit and the metrics. The HTTP/2 server (server.ts)
 * and the gRPC-Web handler (web.ts) only move bytes and statuses.
 */
import { fromBinary, toBinary } from '@bufbuild/protobuf';
import type { NodeContext } from '../services/index.js';
import { GrpcError, GrpcStatus, toGrpcError } from './errors.js';
import type { CallInfo, GrpcMethod, StreamMethod, UnaryMethod } from './methods.js';
import { NATIVE_METHODS } from './methods.js';
import type { GrpcMetrics, GrpcTransport, MethodSeries } from './metrics.js';

/** Open streams per node across both transports; beyond, RESOURCE_EXHAUSTED. */
export const DEFAULT_MAX_STREAMS = 10_000;

export interface GrpcServiceOptions {
  metrics?: GrpcMetrics;
  /** Unexpected failures (answered INTERNAL) with their cause. */
  onError?: (err: unknown, method: string) => void;
  maxStreams?: number;
}

/** Where a stream's messages go: `write` (a batch, in order) answers false when the client is not keeping up. */
export interface MessageSink {
  write(messages: Uint8Array[]): boolean;
  /** Resolves once buffered output has drained (or the call is over). */
  drained(): Promise<void>;
}

export class NativeGrpcService {
  private openStreams = 0;
  readonly maxStreams: number;

  constructor(
    readonly ctx: NodeContext,
    private readonly opts: GrpcServiceOptions = {},
  ) {
    this.maxStreams = opts.maxStreams ?? DEFAULT_MAX_STREAMS;
  }

  /** The method served at a gRPC path, if any. */
  method(path: string): GrpcMethod | undefined {
    return NATIVE_METHODS.get(path);
  }

  get streamCount(): number {
    return this.openStreams;
  }

  /** Maps a failure to its status, reporting unexpected ones. */
  failure(err: unknown, method: GrpcMethod): GrpcError {
    const { error, unexpected } = toGrpcError(err);
    if (unexpected) this.opts.onError?.(err, method.desc.name);
    return error;
  }

  /** Call series by transport and method name, resolved on first use. */
  private readonly series = { grpc: new Map<string, MethodSeries>(), 'grpc-web': new Map<string, MethodSeries>() };

  finished(method: GrpcMethod | string, transport: GrpcTransport, code: GrpcStatus, seconds: number | null): void {
    const metrics = this.opts.metrics;
    if (!metrics) return;
    const name = typeof method === 'string' ? method : method.desc.name;
    let s = this.series[transport].get(name);
    if (!s) {
      s = metrics.method(name, transport);
      this.series[transport].set(name, s);
    }
    s.finished(code, seconds);
  }

  private decode(method: GrpcMethod, body: Uint8Array) {
    try {
      return fromBinary(method.desc.input, body);
    } catch (err) {
      throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, `malformed ${method.desc.input.typeName}: ${(err as Error).message}`);
    }
  }

  /**
   * A unary call: the encoded answer (synchronously when the handler answers so), or a GrpcError thrown or
   * rejected.
   */
  unary(method: UnaryMethod, body: Uint8Array, call: CallInfo): Uint8Array | Promise<Uint8Array> {
    let out: ReturnType<UnaryMethod['handle']>;
    try {
      out = method.handle(this.ctx, this.decode(method, body), call);
    } catch (err) {
      throw this.failure(err, method);
    }
    const encode = (answer: Uint8Array | object): Uint8Array =>
      answer instanceof Uint8Array ? answer : toBinary(method.desc.output, answer as never);
    if (out instanceof Promise) {
      return out.then(encode, (err) => {
        throw this.failure(err, method);
      });
    }
    try {
      return encode(out);
    } catch (err) {
      throw this.failure(err, method);
    }
  }

  /**
   * A server-streaming call: opens the stream (a bad request or the stream limit throws GrpcError before
   * anything is sent), then writes its messages until `call.signal` aborts. Never resolves on its own:
   * event streams end when the client cancels, the deadline passes or the server stops.
   */
  async stream(
    method: StreamMethod,
    body: Uint8Array,
    call: CallInfo,
    sink: MessageSink,
    transport: GrpcTransport,
  ): Promise<void> {
    if (this.openStreams >= this.maxStreams) {
      throw new GrpcError(GrpcStatus.RESOURCE_EXHAUSTED, `too many open streams (limit ${this.maxStreams})`);
    }
    let stream: ReturnType<StreamMethod['open']>;
    try {
      stream = method.open(this.ctx, this.decode(method, body), call);
    } catch (err) {
      throw this.failure(err, method);
    }
    if (call.signal.aborted) {
      stream.close();
      return;
    }
    const name = method.desc.name;
    const metrics = this.opts.metrics;
    stream.onLagged = (n) => metrics?.laggedEvents(transport, n);
    const onAbort = () => stream.close();
    call.signal.addEventListener('abort', onAbort, { once: true });
    this.openStreams++;
    const counted = metrics?.streamOpened(name, transport);
    try {
      for (;;) {
        const batch = await stream.next();
        if (batch === null || call.signal.aborted) return;
        const full = !sink.write(batch);
        counted?.messages(batch.length);
        // Wait for the client before pulling more: meanwhile new events queue in the subscription, which is
        // what measures (and bounds) how far behind this consumer is.
        if (full) await sink.drained();
      }
    } finally {
      call.signal.removeEventListener('abort', onAbort);
      stream.close();
      this.openStreams--;
      counted?.closed();
    }
  }
}
