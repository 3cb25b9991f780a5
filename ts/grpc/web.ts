/**
 * gRPC-Web on the node's main HTTP port (no proxy): `application/grpc-web` (binary) and
 * `application/grpc-web-text` (base64), unary and server streaming, the status in a trailers frame (flag
 * 0x80), the spec's CORS headers and a 204 preflight. Requests under /native.v1.Native/ come here; every
 * other path goes on to the REST / JSON-RPC handler.
 */
import type { HttpBodyStream, HttpHandler, HttpRequest, HttpResponse } from '../http/index.js';
import { GrpcError, GrpcStatus } from './errors.js';
import type { GrpcMethod } from './methods.js';
import type { NativeGrpcService } from './service.js';

export { GRPC_WEB_PATH_PREFIX, GRPC_WEB_REQUEST_HEADERS, withGrpcWeb } from './web-route.js';

/** The spec's CORS headers, on every gRPC-Web answer and the preflight. */
export const GRPC_WEB_CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'access-control-allow-origin': '*',
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'Content-Type, X-Grpc-Web, X-User-Agent, Grpc-Timeout',
  'access-control-expose-headers': 'Grpc-Status, Grpc-Message, Grpc-Encoding, Grpc-Accept-Encoding',
  'access-control-max-age': '86400',
});

const DATA_FLAG = 0x00;
const COMPRESSED_FLAG = 0x01;
const TRAILERS_FLAG = 0x80;
/** Method label of requests for a method this service does not have (bounded metric cardinality). */
const UNKNOWN_METHOD = 'unknown';

type Mode = 'binary' | 'text';

/** The request's framing from its content type; null for anything that is not gRPC-Web (415). */
function modeOf(contentType: string | undefined): Mode | null {
  // What clients send (grpc-web, Connect): no parsing needed.
  if (contentType === 'application/grpc-web+proto' || contentType === 'application/grpc-web') return 'binary';
  const t = (contentType ?? '').split(';')[0].trim().toLowerCase();
  if (t === 'application/grpc-web' || t === 'application/grpc-web+proto') return 'binary';
  if (t === 'application/grpc-web-text' || t === 'application/grpc-web-text+proto') return 'text';
  return null;
}

function frame(flag: number, payload: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + payload.byteLength);
  out[0] = flag;
  out.writeUInt32BE(payload.byteLength, 1);
  out.set(payload, 5);
  return out;
}

/**
 * Stream chunks by message, per framing: a finalized block's event is one encoding shared by every stream
 * (shapes.ts), so its frame (and base64 text) is made once and the same bytes go to every subscriber.
 */
const streamChunks: Record<Mode, WeakMap<Uint8Array, Buffer>> = { binary: new WeakMap(), text: new WeakMap() };

/** The chunk a stream writes for a batch of messages: one message's cached chunk, or a batch's frames together. */
function streamChunk(mode: Mode, messages: Uint8Array[]): Buffer {
  if (messages.length !== 1) {
    const bytes = Buffer.concat(messages.map((m) => frame(DATA_FLAG, m)));
    return mode === 'text' ? Buffer.from(bytes.toString('base64'), 'latin1') : bytes;
  }
  const message = messages[0];
  const cache = streamChunks[mode];
  let chunk = cache.get(message);
  if (chunk === undefined) {
    chunk = frame(DATA_FLAG, message);
    if (mode === 'text') chunk = Buffer.from(chunk.toString('base64'), 'latin1');
    cache.set(message, chunk);
  }
  return chunk;
}

/** grpc-message is percent-encoded UTF-8 (gRPC over HTTP/2: printable ASCII except '%' passes as is). */
export function encodeGrpcMessage(message: string): string {
  let out = '';
  for (const byte of Buffer.from(message, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** The trailers frame: grpc-status, grpc-message and any extra metadata, as HTTP/1 header lines. */
function trailersFrame(err: GrpcError | null): Buffer {
  if (err === null) return OK_TRAILERS;
  let text = `grpc-status:${err ? err.code : GrpcStatus.OK}\r\n`;
  if (err) {
    text += `grpc-message:${encodeGrpcMessage(err.message)}\r\n`;
    for (const [k, v] of Object.entries(err.metadata)) text += `${k.toLowerCase()}:${encodeGrpcMessage(v)}\r\n`;
  }
  return frame(TRAILERS_FLAG, Buffer.from(text, 'latin1'));
}

const OK_TRAILERS = frame(TRAILERS_FLAG, Buffer.from(`grpc-status:${GrpcStatus.OK}\r\n`, 'latin1'));

/** A unary answer: the message frame and the OK trailers frame in one buffer. */
function okAnswer(message: Uint8Array): Buffer {
  const out = Buffer.allocUnsafe(5 + message.byteLength + OK_TRAILERS.length);
  out[0] = DATA_FLAG;
  out.writeUInt32BE(message.byteLength, 1);
  out.set(message, 5);
  out.set(OK_TRAILERS, 5 + message.byteLength);
  return out;
}

/** Response headers per framing, frozen: the HTTP layer checks a frozen header set once. */
const RESPONSE_HEADERS: Readonly<Record<Mode, Readonly<Record<string, string>>>> = {
  binary: Object.freeze({
    ...GRPC_WEB_CORS_HEADERS,
    'content-type': 'application/grpc-web+proto',
    'grpc-accept-encoding': 'identity',
  }),
  text: Object.freeze({
    ...GRPC_WEB_CORS_HEADERS,
    'content-type': 'application/grpc-web-text+proto',
    'grpc-accept-encoding': 'identity',
  }),
};

const TIMEOUT_UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 0.001, n: 0.000_001 };

/** grpc-timeout ("<1-8 digits><H|M|S|m|u|n>") in ms; undefined when absent; throws on a malformed value. */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  if (value === undefined || value === '') return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(value.trim());
  if (!m) throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, `malformed grpc-timeout ${JSON.stringify(value)}`);
  return Number(m[1]) * TIMEOUT_UNITS[m[2]];
}

/** The one message of a unary or server-streaming request. */
function requestMessage(body: Buffer, mode: Mode): Buffer {
  const bytes = mode === 'text' ? Buffer.from(body.toString('latin1'), 'base64') : body;
  if (bytes.length < 5) throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, 'gRPC-Web request has no message frame');
  if (bytes[0] === COMPRESSED_FLAG) throw new GrpcError(GrpcStatus.UNIMPLEMENTED, 'compressed messages are not supported');
  const length = bytes.readUInt32BE(1);
  if (bytes[0] !== DATA_FLAG || bytes.length !== 5 + length) {
    throw new GrpcError(GrpcStatus.INVALID_ARGUMENT, 'gRPC-Web request must be exactly one uncompressed message frame');
  }
  return bytes.subarray(5);
}

/** Deadline and cancellation of one call, as the HTTP/2 server has them from grpc-js; the signal made on demand. */
class WebCall {
  private controller: AbortController | null = null;
  private timer: NodeJS.Timeout | undefined;
  private readonly listeners: (() => void)[] = [];
  reason: 'cancelled' | 'deadline' | null = null;

  private readonly deadline: number | undefined;

  constructor(timeoutMs: number | undefined) {
    if (timeoutMs !== undefined) this.deadline = performance.now() + timeoutMs;
  }

  /** Starts the deadline's timer: only once there is work to stop (a stream, a unary answer not ready at once). */
  watch(): void {
    if (this.deadline === undefined || this.reason) return;
    this.timer = setTimeout(() => this.abort('deadline'), Math.max(0, this.deadline - performance.now()));
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.reason) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** `cb` runs once when the call is aborted (at once if it already is). */
  onAbort(cb: () => void): void {
    if (this.reason) cb();
    else this.listeners.push(cb);
  }

  abort(reason: 'cancelled' | 'deadline'): void {
    if (this.reason) return;
    this.reason = reason;
    this.done();
    this.controller?.abort();
    for (const cb of this.listeners.splice(0)) cb();
  }

  done(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** The status of a call its signal ended. */
  ended(): GrpcError {
    return this.reason === 'deadline'
      ? new GrpcError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded')
      : new GrpcError(GrpcStatus.CANCELLED, 'Cancelled');
  }
}

export interface GrpcWebOptions {
  /** The server is stopping: open streams end with UNAVAILABLE. */
  signal?: AbortSignal;
}

/** The gRPC-Web handler; answers only requests under GRPC_WEB_PATH_PREFIX (see withGrpcWeb). */
export function createGrpcWebHandler(service: NativeGrpcService, opts: GrpcWebOptions = {}): HttpHandler {
  const encode = (mode: Mode, bytes: Buffer): Buffer =>
    mode === 'text' ? Buffer.from(bytes.toString('base64'), 'latin1') : bytes;
  /** A whole answer: the message and OK trailers, or the error's trailers alone. */
  const answer = (mode: Mode, message: Uint8Array | null, err: GrpcError | null): HttpResponse => {
    const bytes = message ? okAnswer(message) : trailersFrame(err);
    return { status: 200, headers: RESPONSE_HEADERS[mode], body: encode(mode, bytes) };
  };

  const unary = (
    method: GrpcMethod & { kind: 'unary' },
    message: Buffer,
    mode: Mode,
    timeoutMs: number | undefined,
  ): HttpResponse | Promise<HttpResponse> => {
    const t0 = performance.now();
    const call = new WebCall(timeoutMs);
    const ok = (out: Uint8Array): HttpResponse => {
      call.done();
      service.finished(method, 'grpc-web', GrpcStatus.OK, (performance.now() - t0) / 1000);
      return answer(mode, out, null);
    };
    const fail = (err: unknown): HttpResponse => {
      call.done();
      const e = err instanceof GrpcError ? err : service.failure(err, method);
      service.finished(method, 'grpc-web', e.code, (performance.now() - t0) / 1000);
      return answer(mode, null, e);
    };
    let out: Uint8Array | Promise<Uint8Array>;
    try {
      out = service.unary(method, message, call);
    } catch (err) {
      return fail(err);
    }
    // Answered at once (the common case: the head, the window, account reads): no promise at all.
    if (!(out instanceof Promise)) return ok(out);
    if (timeoutMs === undefined) return out.then(ok, fail);
    call.watch();
    const deadline = new Promise<never>((_, reject) => call.onAbort(() => reject(call.ended())));
    return Promise.race([out, deadline]).then(ok, fail);
  };

  const streaming = (
    method: GrpcMethod & { kind: 'server_streaming' },
    message: Buffer,
    mode: Mode,
    timeoutMs: number | undefined,
  ) => {
    const run = (body: HttpBodyStream) => {
      const call = new WebCall(timeoutMs);
      call.watch();
      const signal = call.signal;
      const onServerStop = () => call.abort('cancelled');
      opts.signal?.addEventListener('abort', onServerStop, { once: true });
      body.onClose(() => call.abort('cancelled'));
      const sink = {
        write: (messages: Uint8Array[]) => body.write(streamChunk(mode, messages)),
        drained: () =>
          new Promise<void>((resolve) => {
            if (signal.aborted || body.closed) return resolve();
            // One listener per wait, removed again: a long stream waits many times.
            const done = () => {
              signal.removeEventListener('abort', done);
              resolve();
            };
            signal.addEventListener('abort', done, { once: true });
            body.onDrain(done);
          }),
      };
      const end = (err: GrpcError | null) => {
        call.done();
        opts.signal?.removeEventListener('abort', onServerStop);
        service.finished(method, 'grpc-web', err ? err.code : GrpcStatus.OK, null);
        body.end(encode(mode, trailersFrame(err)));
      };
      service.stream(method, message, call, sink, 'grpc-web').then(
        () => {
          const stopping = opts.signal?.aborted && call.reason === 'cancelled';
          end(stopping ? new GrpcError(GrpcStatus.UNAVAILABLE, 'server is shutting down') : call.reason ? call.ended() : null);
        },
        (err) => end(err instanceof GrpcError ? err : service.failure(err, method)),
      );
    };
    return { status: 200, headers: RESPONSE_HEADERS[mode], stream: run };
  };

  return (req: HttpRequest): HttpResponse | Promise<HttpResponse> => {
    if (req.method === 'OPTIONS') return { status: 204, headers: GRPC_WEB_CORS_HEADERS };
    if (req.method !== 'POST') return { status: 405, headers: { ...GRPC_WEB_CORS_HEADERS, allow: 'POST, OPTIONS' } };
    const mode = modeOf(req.headers['content-type']);
    if (mode === null)
      return { status: 415, headers: { ...GRPC_WEB_CORS_HEADERS, accept: 'application/grpc-web, application/grpc-web-text' } };
    const method = service.method(req.path);
    let message: Buffer;
    let timeoutMs: number | undefined;
    try {
      if (!method) throw new GrpcError(GrpcStatus.UNIMPLEMENTED, `unknown method ${req.path}`);
      const encoding = req.headers['grpc-encoding'];
      if (encoding !== undefined && encoding !== 'identity') {
        throw new GrpcError(GrpcStatus.UNIMPLEMENTED, `grpc-encoding ${encoding} is not supported (identity only)`);
      }
      timeoutMs = parseGrpcTimeout(req.headers['grpc-timeout']);
      message = requestMessage(req.body, mode);
    } catch (err) {
      const e = err as GrpcError;
      service.finished(method ?? UNKNOWN_METHOD, 'grpc-web', e.code, null);
      return answer(mode, null, e);
    }
    return method.kind === 'unary' ? unary(method, message, mode, timeoutMs) : streaming(method, message, mode, timeoutMs);
  };
}
