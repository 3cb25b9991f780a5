/** Backend-neutral pieces: response preparation, body collection, concurrency slots, IP formatting. */
import { STATUS_CODES } from 'node:http';
import type { HttpBodyStream, HttpHandler, HttpLogger, HttpRequest, HttpResponse, PrefixHeaders, WsEndpoint } from './types.js';

export const DEFAULT_MAX_BODY_BYTES = 1_048_576;
export const DEFAULT_MAX_CONCURRENT = 500;
/**
 * A rejected body (413) is normally drained so the client can read the answer on a kept-alive connection.
 * When the announced Content-Length exceeds the limit by more than this, the connection is closed instead.
 */
export const DRAIN_MAX_BYTES = 8 * 1_048_576;
/** Idle keep-alive connections are dropped after this long (uWS has a fixed 10 s idle timeout). */
export const KEEP_ALIVE_TIMEOUT_MS = 10_000;

/** Settings a backend needs, defaults filled in. */
export interface ServerConfig {
  host: string;
  port: number;
  maxBodyBytes: number;
  maxConcurrent: number;
  logger: HttpLogger;
  /** Request headers the handler reads (lower case); undefined = every header. */
  requestHeaders?: readonly string[];
  /** Further headers for paths under a prefix (only with requestHeaders). */
  prefixHeaders?: readonly PrefixHeaders[];
  websocket?: WsEndpoint;
}

/** A response checked and ready to write; `length` is the Content-Length (also for HEAD, whose body is dropped). */
export interface Prepared {
  status: number;
  /** "200 OK" */
  statusLine: string;
  /** lower-case names, validated, without hop-by-hop / framing headers */
  headers: Array<[string, string]>;
  /** undefined = nothing to send */
  body: string | Uint8Array | undefined;
  length: number;
  /** 204 / 304: no body and no Content-Length at all */
  noBody: boolean;
  /** A streamed body (chunked): the handler's writer, started once the headers are out. */
  stream?: (body: HttpBodyStream) => void;
  /**
   * `headers` as one name and one value that carries the others as further `name: value` lines, for a backend
   * that writes each header line as given (uWS: one native call per header costs ~0.25 µs, and gRPC-Web's
   * answers have 7). Only for a handler's frozen header set (made once); values never hold CR or LF (checked).
   */
  headerBlock?: readonly [string, string];
}

const statusLines = new Map<number, string>();
export function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (line === undefined) {
    line = `${status} ${STATUS_CODES[status] ?? 'Unknown'}`;
    statusLines.set(status, line);
  }
  return line;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;
/** Shared by answers without headers; Prepared.headers are never changed after preparation. */
const NO_HEADERS: Array<[string, string]> = [];
/** Framing and connection headers are ours to set; a handler's values for them are ignored. */
const DROPPED = new Set(['content-length', 'transfer-encoding', 'connection', 'keep-alive', 'upgrade']);

interface CheckedHeaders {
  headers: Array<[string, string]>;
  hasType: boolean;
  block?: readonly [string, string];
}

/** Checked headers of a frozen header object (a handler's shared constant), and whether it sets a type. */
const checkedHeaders = new WeakMap<object, CheckedHeaders>();

/** Several header lines as one (Prepared.headerBlock); undefined for fewer than two. */
function headerBlock(headers: Array<[string, string]>): readonly [string, string] | undefined {
  if (headers.length < 2) return undefined;
  let value = headers[0][1];
  for (let i = 1; i < headers.length; i++) value += `\r\n${headers[i][0]}: ${headers[i][1]}`;
  return [headers[0][0], value];
}

/** A handler's headers, checked: lower-case names, values without control characters, framing dropped. */
function checkHeaders(given: Record<string, string>): CheckedHeaders {
  const headers: Array<[string, string]> = [];
  let hasType = false;
  for (const name of Object.keys(given)) {
    const value: unknown = given[name];
    if (value === undefined) continue;
    const k = name.toLowerCase();
    const v = String(value);
    if (!TOKEN.test(k)) throw new TypeError(`invalid response header name ${JSON.stringify(name)}`);
    if (BAD_VALUE.test(v)) throw new TypeError(`invalid value for response header ${k}`);
    if (DROPPED.has(k)) continue;
    if (k === 'content-type') hasType = true;
    headers.push([k, v]);
  }
  return { headers, hasType };
}

/**
 * Validates a handler's answer; throws (-> 500) when it cannot be sent as is, identically on both backends.
 * A frozen header object is checked once and its result reused (the JSON-RPC route answers with one).
 */
export function prepareResponse(res: HttpResponse, isHead: boolean): Prepared {
  if (res === null || typeof res !== 'object') throw new TypeError('handler did not return a response object');
  const status = res.status;
  if (!Number.isInteger(status) || status < 200 || status > 599) {
    throw new TypeError(`handler returned invalid status ${String(status)}`);
  }
  let body: string | Uint8Array | undefined;
  let length = 0;
  const raw: unknown = res.body;
  if (typeof raw === 'string') {
    body = raw;
    length = Buffer.byteLength(raw);
  } else if (raw instanceof Uint8Array) {
    body = raw;
    length = raw.byteLength;
  } else if (raw !== undefined && raw !== null) {
    throw new TypeError('response body must be a string or a Buffer');
  }
  const noBody = status === 204 || status === 304;
  const stream = res.stream;
  if (stream !== undefined) {
    if (typeof stream !== 'function') throw new TypeError('response stream must be a function');
    if (body !== undefined || noBody) throw new TypeError('a streamed response has no body of its own and is not 204/304');
  }
  if (noBody || length === 0) {
    body = undefined;
    length = 0;
  }
  let headers: Array<[string, string]> = NO_HEADERS;
  let hasType = false;
  let block: readonly [string, string] | undefined;
  const given = res.headers;
  if (given) {
    let checked = Object.isFrozen(given) ? checkedHeaders.get(given) : undefined;
    if (!checked) {
      checked = checkHeaders(given);
      if (Object.isFrozen(given)) {
        checked.block = headerBlock(checked.headers);
        checkedHeaders.set(given, checked);
      }
    }
    ({ headers, hasType, block } = checked);
  }
  if (length > 0 && !hasType) {
    headers = [...headers, ['content-type', 'application/json']];
    block = undefined;
  }
  const prepared: Prepared = { status, statusLine: statusLine(status), headers, body: isHead ? undefined : body, length, noBody };
  if (block !== undefined) prepared.headerBlock = block;
  // A HEAD answer has no body to stream: the headers alone, like any other HEAD answer.
  if (stream !== undefined && !isHead) prepared.stream = stream;
  return prepared;
}

/** A fixed JSON error answer. */
export function jsonError(status: number, payload: object): Prepared {
  return prepareResponse({ status, body: JSON.stringify(payload) }, false);
}

export const BUSY = jsonError(503, { error: 'server busy' });
export const INTERNAL = jsonError(500, { error: 'internal error' });
export const BAD_REQUEST = jsonError(400, { error: 'bad request' });
export function tooLarge(limit: number): Prepared {
  return jsonError(413, { error: 'request body too large', limit });
}

/** Same response for a HEAD request: Content-Length kept, body dropped. */
export function forMethod(p: Prepared, isHead: boolean): Prepared {
  return isHead && p.body !== undefined ? { ...p, body: undefined } : p;
}

/** Adds one received header to a lower-case map, joining repeats like node:http does for most headers. */
export function addHeader(headers: Record<string, string>, name: string, value: string): void {
  const prev = headers[name];
  if (prev === undefined) headers[name] = value;
  else headers[name] = `${prev}${name === 'cookie' ? '; ' : ', '}${value}`;
}

/** Content-Length as a number; undefined when absent, -1 when malformed. */
export function parseContentLength(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  // Fast path (every ordinary request): 1 to 15 digits, nothing else.
  const n = value.length;
  if (n > 0 && n <= 15) {
    let digits = true;
    for (let i = 0; i < n && digits; i++) {
      const c = value.charCodeAt(i);
      digits = c >= 48 && c <= 57;
    }
    if (digits) return Number(value);
  }
  if (!/^\s*\d{1,15}\s*$/.test(value)) return -1;
  return Number(value);
}

/** "::ffff:1.2.3.4" -> "1.2.3.4"; anything else unchanged. */
export function normalizeIp(ip: string): string {
  if (ip.length > 7 && ip.charCodeAt(0) === 58 /* : */ && /^::ffff:\d+\.\d+\.\d+\.\d+$/i.test(ip)) return ip.slice(7);
  return ip;
}

/** Formats a 4- or 16-byte binary address like node's socket.remoteAddress (RFC 5952), IPv4-mapped as IPv4. */
export function formatIp(bytes: Uint8Array): string {
  if (bytes.length === 4) return `${bytes[0]}.${bytes[1]}.${bytes[2]}.${bytes[3]}`;
  if (bytes.length !== 16) return '';
  let mapped = bytes[10] === 0xff && bytes[11] === 0xff;
  for (let i = 0; mapped && i < 10; i++) if (bytes[i] !== 0) mapped = false;
  if (mapped) return `${bytes[12]}.${bytes[13]}.${bytes[14]}.${bytes[15]}`;
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  let bestStart = -1;
  let bestLen = 0;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number) =>
    groups
      .slice(from, to)
      .map((g) => g.toString(16))
      .join(':');
  if (bestLen < 2) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLen, 8)}`;
}

/** Shared zero-length body (cannot be mutated). */
export const EMPTY = Buffer.alloc(0);

/**
 * A request as handlers see it. The query string is parsed on first use (most routes read none), and the
 * client address may be read on first use too (uWS hands it out as a fresh ArrayBuffer per call, a cost
 * only rate limits and audit records need to pay).
 */
export class Request implements HttpRequest {
  body: Buffer = EMPTY;
  private parsed: URLSearchParams | undefined;

  constructor(
    readonly method: string,
    readonly path: string,
    private readonly rawQuery: string,
    readonly headers: Record<string, string>,
    private address: string | (() => string),
  ) {}

  get query(): URLSearchParams {
    this.parsed ??= new URLSearchParams(this.rawQuery);
    return this.parsed;
  }

  get ip(): string {
    if (typeof this.address === 'function') this.address = this.address();
    return this.address;
  }
}

/**
 * Accumulates a request body up to `limit` bytes. With a known length the bytes go straight into one buffer;
 * otherwise chunks are kept and joined at the end. Never holds more than `limit` bytes.
 */
export class BodyCollector {
  private chunks: Buffer[] = [];
  private buf: Buffer | undefined;
  size = 0;

  constructor(
    private readonly limit: number,
    expected?: number,
  ) {
    if (expected !== undefined && expected > 0 && expected <= limit) this.buf = Buffer.allocUnsafe(expected);
  }

  /** Adds a chunk (copied when `copy`, else kept by reference). Returns false, dropping everything, once over the limit. */
  push(chunk: Uint8Array, copy: boolean): boolean {
    const n = chunk.byteLength;
    if (n === 0) return true;
    const next = this.size + n;
    if (next > this.limit) {
      this.chunks = [];
      this.buf = undefined;
      return false;
    }
    if (this.buf !== undefined && next <= this.buf.length) {
      this.buf.set(chunk, this.size);
    } else {
      if (this.buf !== undefined) {
        this.chunks.push(this.buf.subarray(0, this.size));
        this.buf = undefined;
      }
      this.chunks.push(
        copy ? Buffer.from(chunk) : Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, n),
      );
    }
    this.size = next;
    return true;
  }

  finish(): Buffer {
    if (this.buf !== undefined) return this.size === this.buf.length ? this.buf : this.buf.subarray(0, this.size);
    if (this.chunks.length === 0) return EMPTY;
    if (this.chunks.length === 1) return this.chunks[0];
    return Buffer.concat(this.chunks, this.size);
  }
}

/** Counts requests in flight against a cap. */
export class Slots {
  inFlight = 0;
  constructor(readonly max: number) {}
  tryAcquire(): boolean {
    if (this.inFlight >= this.max) return false;
    this.inFlight++;
    return true;
  }
  release(): void {
    this.inFlight--;
  }
}

/**
 * Runs the handler and turns its outcome into something writable: its answer when valid, else 500 with an
 * error log. Never throws or rejects; synchronous handlers give a synchronous result (uWS writes it corked).
 */
export function runHandler(handler: HttpHandler, req: HttpRequest, logger: HttpLogger): Prepared | Promise<Prepared> {
  const isHead = req.method === 'HEAD';
  const fail = (err: unknown): Prepared => {
    safeLog(logger, 'error', { err, method: req.method, path: req.path }, 'http handler failed');
    return forMethod(INTERNAL, isHead);
  };
  const settle = (res: HttpResponse): Prepared => {
    try {
      return prepareResponse(res, isHead);
    } catch (err) {
      return fail(err);
    }
  };
  let out: HttpResponse | Promise<HttpResponse>;
  try {
    out = handler(req);
  } catch (err) {
    return fail(err);
  }
  if (out !== null && typeof out === 'object' && typeof (out as PromiseLike<HttpResponse>).then === 'function') {
    return Promise.resolve(out).then(settle, fail);
  }
  return settle(out as HttpResponse);
}

export function defaultLogger(): HttpLogger {
  return {
    info: (o, msg) => console.info(msg ?? '', o),
    warn: (o, msg) => console.warn(msg ?? '', o),
    error: (o, msg) => console.error(msg ?? '', o),
  };
}

/** Logs without ever throwing: a broken logger must not take a request (or the process) down. */
export function safeLog(logger: HttpLogger, level: 'info' | 'warn' | 'error', o: object, msg: string): void {
  try {
    logger[level](o, msg);
  } catch {
    // ignore
  }
}

/** Reports a client abort where the logger has a debug level. */
export function logAbort(logger: HttpLogger, backend: string, method: string, path: string): void {
  try {
    logger.debug?.({ backend, method, path }, 'http client aborted request');
  } catch {
    // ignore
  }
}

/**
 * Whether a WebSocket upgrade is refused, and with which status: 503 at the connection limit, else what the
 * endpoint's check says (a check that throws is a 500, logged).
 */
export function upgradeRefusal(
  ep: WsEndpoint,
  req: HttpRequest,
  open: number,
  logger: HttpLogger,
  backend: string,
): number | null {
  if (open >= ep.maxConnections) return 503;
  try {
    return ep.authorize(req);
  } catch (err) {
    safeLog(logger, 'error', { err, backend }, 'websocket upgrade check failed');
    return 500;
  }
}

/**
 * The backend-neutral half of a streamed body: the closed state, the close callbacks and the rule that
 * nothing is written after end() or close. A backend supplies the raw write, end and drain registration.
 */
export class BodyStream implements HttpBodyStream {
  private done = false;
  private readonly closeCallbacks: (() => void)[] = [];

  constructor(
    private readonly raw: {
      write(chunk: Uint8Array): boolean;
      end(chunk?: Uint8Array): void;
      onDrain(cb: () => void): void;
    },
  ) {}

  get closed(): boolean {
    return this.done;
  }

  write(chunk: Uint8Array): boolean {
    if (this.done) return false;
    return this.raw.write(chunk);
  }

  end(chunk?: Uint8Array): void {
    if (this.done) return;
    this.done = true;
    this.raw.end(chunk);
  }

  onDrain(cb: () => void): void {
    if (!this.done) this.raw.onDrain(cb);
  }

  onClose(cb: () => void): void {
    if (this.done) return;
    this.closeCallbacks.push(cb);
  }

  /** The connection went away before end(): tell the writer, once. */
  connectionClosed(): void {
    if (this.done) return;
    this.done = true;
    for (const cb of this.closeCallbacks.splice(0)) {
      try {
        cb();
      } catch {
        // a writer's close callback must not break the connection's teardown
      }
    }
  }
}
