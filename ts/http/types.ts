/** Public types of the HTTP adapter (shared by the uWS and node:http backends). */

export interface HttpRequest {
  /** Upper-case method, e.g. "GET". */
  method: string;
  /** Request path without the query string (raw, not percent-decoded). */
  path: string;
  query: URLSearchParams;
  /** Lower-case header names; repeated headers joined with ", " ("; " for cookie). */
  headers: Record<string, string>;
  body: Buffer;
  /** Remote address, no port; IPv4-mapped IPv6 addresses are given as plain IPv4. */
  ip: string;
}

export interface HttpResponse {
  status: number;
  headers?: Record<string, string>;
  body?: string | Buffer;
  /**
   * A streamed body instead of `body`: called once the status and headers are written, it writes chunks as
   * they are produced (chunked transfer encoding) and ends the response itself. The request's concurrency
   * slot is released when the stream starts, so long-lived streams are bounded by their producer.
   */
  stream?: (body: HttpBodyStream) => void;
}

/** The body of a streamed response (HttpResponse.stream), the same on both backends. */
export interface HttpBodyStream {
  /** Queues a chunk; false when the client is not keeping up: wait for onDrain before writing more. */
  write(chunk: Uint8Array): boolean;
  /** Ends the response, after an optional last chunk. Writes after end() or close are ignored. */
  end(chunk?: Uint8Array): void;
  /** `cb` runs once, when the output queued so far has drained (after write() answered false). */
  onDrain(cb: () => void): void;
  /** `cb` runs once if the connection goes away (client abort, server close) before end(). */
  onClose(cb: () => void): void;
  /** After end() or once the connection went away. */
  readonly closed: boolean;
}

export type HttpHandler = (req: HttpRequest) => HttpResponse | Promise<HttpResponse>;

export interface HttpLogger {
  info(o: object, msg?: string): void;
  warn(o: object, msg?: string): void;
  error(o: object, msg?: string): void;
  /** Optional: client aborts and other chatter are reported here when present. */
  debug?(o: object, msg?: string): void;
}

export type HttpBackend = 'uws' | 'node';

export interface HttpServerOptions {
  host: string;
  /** 0 = ephemeral; the chosen port is HttpServer.port. */
  port: number;
  /** 'auto' (default): uWS when its binary loads here, else node:http. Env NATIVE_HTTP_BACKEND=node|uws overrides 'auto'. */
  backend?: HttpBackend | 'auto';
  /** Largest accepted request body, default 1 MiB. */
  maxBodyBytes?: number;
  /** Requests in flight at once (request start until the response is written), default 500; beyond that 503. */
  maxConcurrent?: number;
  /**
   * Request headers the handler reads (lower case). The uWS backend then copies just these (one lookup
   * each; a repeated header gives its first value) instead of every header through a callback per header,
   * which measured a few µs per request. Default: every header (repeats joined). node:http parses every
   * header anyway and passes them all.
   */
  requestHeaders?: readonly string[];
  /**
   * Further request headers read only for paths under a prefix (with `requestHeaders` set): an interface
   * mounted under its own prefix (gRPC-Web) does not make every other request copy its headers.
   */
  prefixHeaders?: readonly PrefixHeaders[];
  logger?: HttpLogger;
  /** A WebSocket endpoint on the same port (absent: upgrades are refused like any unknown request). */
  websocket?: WsEndpoint;
}

/** Request headers (lower case) the handler reads for paths starting with `prefix`. */
export interface PrefixHeaders {
  prefix: string;
  names: readonly string[];
}

/**
 * A WebSocket endpoint on the HTTP port, served the same way by both backends: uWebSockets.js natively,
 * node:http through the `ws` library. Text frames in, text frames out; a client that does not read its
 * answers is dropped once `maxBufferedBytes` wait for it (never buffered without bound).
 */
export interface WsEndpoint {
  /** Paths that accept an upgrade (e.g. `/rpc` and `/`). */
  paths: readonly string[];
  /** Largest message a client may send; a larger one closes the connection (1009). */
  maxMessageBytes: number;
  /** Bytes waiting to be sent to a client before the connection is dropped as too slow. */
  maxBufferedBytes: number;
  /** Open connections at once; beyond, an upgrade is answered 503. */
  maxConnections: number;
  /** Seconds of silence after which the server pings, and drops a peer that does not answer. */
  idleTimeoutSecs: number;
  /** Decide on an upgrade from its request: null accepts, a status (401, 403, 429) refuses. */
  authorize(req: HttpRequest): number | null;
  /** A connection opened: the handlers of what it receives and of its end. */
  open(conn: WsConnection, req: HttpRequest): WsHandlers;
}

export interface WsConnection {
  /** Client address (as HttpRequest.ip). */
  readonly ip: string;
  /** Queue a text frame. False when the connection is gone, or was just dropped for back-pressure. */
  send(text: string): boolean;
  /** Close with a status code (1000 normal, 1008 policy, 1011 server error). */
  close(code?: number, reason?: string): void;
  /** Bytes queued and not yet written to the socket. */
  bufferedBytes(): number;
}

export interface WsHandlers {
  /** A text (or binary) message; the buffer is the handler's to keep. */
  message(data: Buffer): void;
  /** The connection ended (either side, or dropped); nothing may be sent after this. */
  closed(code: number): void;
}

export interface HttpServer {
  readonly backend: HttpBackend;
  /** The actual port (also when 0 was asked for). */
  readonly port: number;
  /** Open WebSocket connections. */
  readonly wsConnections: () => number;
  /**
   * Graceful drain, first step: from now on every answer closes its connection (`Connection: close`), so
   * keep-alive clients and balancers open their next request elsewhere while this server still answers.
   */
  drain(): void;
  /**
   * Graceful drain, second step: the listener closes (no new connections), idle keep-alive connections
   * are closed and open ones finish what they are doing (each answer closes its connection). Idempotent.
   */
  stopListening(): void;
  /** Requests in flight: reading their body or in the handler (a streamed answer counts until it starts). */
  inFlight(): number;
  /** Closes every WebSocket connection with `code` (1001 "going away" at the end of a drain). */
  closeWebSockets(code: number, reason: string): void;
  /** Stops listening, drops open connections (in-flight requests are abandoned) and resolves once closed. Idempotent. */
  close(): Promise<void>;
}

/**
 * The server could not listen. `code` is the socket error (EADDRINUSE: another process has the port, also
 * another uWS server, which listens with an exclusive port here; EADDRNOTAVAIL: the host is not an address of
 * this machine; EACCES: a privileged port).
 */
export class ListenError extends Error {
  constructor(
    readonly code: string,
    readonly host: string,
    readonly port: number,
    /** The flag that chooses this port (servers other than the API name theirs). */
    readonly flag = '--port',
  ) {
    super(listenMessage(code, host, port, flag));
    this.name = 'ListenError';
  }
}

function listenMessage(code: string, host: string, port: number, flag: string): string {
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} is in use on ${host} (another node or program listens there; stop it or choose ${flag})`;
    case 'EADDRNOTAVAIL':
      return `cannot listen on ${host}:${port}: ${host} is not an address of this machine`;
    case 'EACCES':
      return `cannot listen on ${host}:${port}: permission denied (ports below 1024 need privileges)`;
    default:
      return `cannot listen on ${host}:${port}: ${code}`;
  }
}
