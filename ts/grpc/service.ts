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
  /** The stream is open (the request was accepted): a transport may send its response headers now. */
  opened?(): void;
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
   * A server-streaming call: opens the stream (a bad request or the stream limit rejects with GrpcError before
   * anything is sent), then writes its messages until `call.signal` aborts. Never resolves on its own:
   * event streams end when the client cancels, the deadline passes or the server stops.
   *
   * Delivery is callback-driven, not a loop of awaits: a stream waiting for events registers one callback with
   * its subscription; the feed's event wakes every waiting stream, and one microtask (deferPump) then pulls and
   * writes for all of them. A live event reaches each subscriber's transport without a promise or an
   * allocation of its own beyond the batch array: the cost per subscriber is the transport's write.
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
    const signal = call.signal;
    if (signal.aborted) {
      stream.close();
      return;
    }
    const metrics = this.opts.metrics;
    stream.onLagged = (n) => metrics?.laggedEvents(transport, n);
    const onAbort = () => stream.close();
    signal.addEventListener('abort', onAbort, { once: true });
    this.openStreams++;
    const counted = metrics?.streamOpened(method.desc.name, transport);
    try {
      sink.opened?.();
      await pumpStream(stream, sink, signal, counted);
    } finally {
      signal.removeEventListener('abort', onAbort);
      stream.close();
      this.openStreams--;
      counted?.closed();
    }
  }
}

/** What the pump needs of an event stream (EventStream). */
interface PolledStream {
  poll(): Uint8Array[] | null | undefined | Promise<Uint8Array[] | null>;
  whenReady(cb: () => void): void;
}

/**
 * Moves a stream's events to its sink until the stream ends (poll answers null) or the signal aborts. Pulls
 * only while the sink accepts more: meanwhile new events queue in the subscription, which is what measures
 * (and bounds) how far behind this consumer is.
 */
function pumpStream(
  stream: PolledStream,
  sink: MessageSink,
  signal: AbortSignal,
  counted: { messages(n: number): void } | undefined,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let ended = false;
    const end = (err?: unknown) => {
      if (ended) return;
      ended = true;
      if (err === undefined) resolve();
      else reject(err);
    };
    /** Writes a batch; true when the pump may pull again at once. */
    const deliver = (batch: Uint8Array[] | null): boolean => {
      if (batch === null || signal.aborted) {
        end();
        return false;
      }
      const full = !sink.write(batch);
      counted?.messages(batch.length);
      if (full) {
        sink.drained().then(pump, end);
        return false;
      }
      return true;
    };
    const pump = (): void => {
      try {
        while (!ended) {
          if (signal.aborted) {
            end();
            return;
          }
          const next = stream.poll();
          if (next === undefined) {
            stream.whenReady(wake);
            return;
          }
          if (next instanceof Promise) {
            next.then((batch) => {
              if (deliver(batch)) pump();
            }, end);
            return;
          }
          if (!deliver(next)) return;
        }
      } catch (err) {
        end(err);
      }
    };
    const wake = () => deferPump(pump);
    pump();
  });
}

/**
 * Streams written per slice of a fan-out. Between slices the event loop turns: HTTP/2 flushes what the slice
 * wrote (node:http2 sends a session's frames once the running task ends), so the first subscribers' bytes are
 * on their way (and their readers at work on the other core) while the next slice is written, and other
 * requests are not held up behind a fan-out to thousands of streams.
 */
export const FANOUT_SLICE = 50;

/** Pumps woken by feed events, in order, not yet run; `nextWoken` is the first of them. */
let woken: (() => void)[] = [];
let nextWoken = 0;
let pumping = false;

function runWoken(): void {
  const end = Math.min(woken.length, nextWoken + FANOUT_SLICE);
  // A pump never throws (pumpStream catches); each only pulls and writes its own stream.
  while (nextWoken < end) woken[nextWoken++]();
  if (nextWoken < woken.length) {
    setImmediate(runWoken);
    return;
  }
  woken = [];
  nextWoken = 0;
  pumping = false;
}

/**
 * Runs `pump` after the code that woke it (the chain's commit, which emits inside its synchronous step),
 * together with every other pump woken meanwhile: a microtask for the first slice of a fan-out, a turn of the
 * event loop for each further one, never a promise per subscriber, and never inside the feed's emit.
 */
function deferPump(pump: () => void): void {
  woken.push(pump);
  if (!pumping) {
    pumping = true;
    queueMicrotask(runWoken);
  }
}
