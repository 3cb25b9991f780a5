/** uWebSockets.js backend (ganache's build, CJS native addon). */
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import type {
  HttpRequest as UwsRequest,
  HttpResponse as UwsResponse,
  TemplatedApp,
  us_listen_socket,
} from '@trufflesuite/uws-js-unofficial';
import {
  BAD_REQUEST,
  BUSY,
  BodyCollector,
  BodyStream,
  DRAIN_MAX_BYTES,
  EMPTY,
  formatIp,
  forMethod,
  logAbort,
  type Prepared,
  parseContentLength,
  Request,
  runHandler,
  safeLog,
  type ServerConfig,
  Slots,
  addHeader,
  tooLarge,
} from './common.js';
import { type HttpHandler, type HttpServer, ListenError, type PrefixHeaders } from './types.js';
import { attachUwsWebSocket } from './ws-uws.js';

/** uWS's listen option for a port no other socket may share (ListenOptions.LIBUS_LISTEN_EXCLUSIVE_PORT). */
const LIBUS_LISTEN_EXCLUSIVE_PORT = 1;

/** listen(host, port, options, cb): in the addon, missing from the package's typings. */
interface ListenWithOptions {
  listen(host: string, port: number, options: number, cb: (socket: us_listen_socket | false) => void): void;
}

/** The parts of the addon used here. */
export interface UwsModule {
  App(): TemplatedApp;
  us_listen_socket_close(socket: us_listen_socket): void;
  us_socket_local_port(socket: us_listen_socket): number;
}

let loaded: { mod: UwsModule | null; error?: unknown } | undefined;

/**
 * Loads the platform's uWS binary directly. The package's own entry point would silently fall back to a slow
 * pure-JS imitation when no binary matches; here a missing binary means "no uWS".
 */
export function loadUws(): { mod: UwsModule | null; error?: unknown } {
  if (!loaded) {
    const file = `@trufflesuite/uws-js-unofficial/binaries/uws_${process.platform}_${process.arch}_${process.versions.modules}.node`;
    try {
      const mod = createRequire(import.meta.url)(file) as UwsModule;
      if (typeof mod?.App !== 'function') throw new Error(`${file} does not export App`);
      loaded = { mod };
    } catch (error) {
      loaded = { mod: null, error };
    }
  }
  return loaded;
}

/** uWS reports methods in lower case; the usual ones map to constant strings (no allocation per request). */
const METHODS = new Map(['get', 'post', 'head', 'options', 'put', 'delete', 'patch'].map((m) => [m, m.toUpperCase()]));

/** Request phases: reading the body, in the handler, answered. */
const BODY = 0;
const HANDLER = 1;
const DONE = 2;

/** The status line's headers: one call for a frozen set (uWS writes `name: value\r\n` as given), else one each. */
function writeHeaders(res: UwsResponse, p: Prepared): void {
  const block = p.headerBlock;
  if (block !== undefined) {
    res.writeHeader(block[0], block[1]);
    return;
  }
  const h = p.headers;
  for (let i = 0; i < h.length; i++) res.writeHeader(h[i][0], h[i][1]);
}

/** Writes a whole response; the socket must be corked (see write). */
function writeCorked(res: UwsResponse, p: Prepared, isHead: boolean, close: boolean): void {
  // uWS writes "200 OK" itself when no status is given.
  if (p.status !== 200) res.writeStatus(p.statusLine);
  writeHeaders(res, p);
  // endWithoutBody cannot close the connection here (any first argument, undefined too, becomes a
  // Content-Length): a bodiless answer keeps its connection, also while draining.
  if (p.noBody) {
    res.endWithoutBody();
  } else if (isHead) {
    // uWS's endWithoutBody(n) would wait for n body bytes; announce the length by hand instead
    res.writeHeader('content-length', String(p.length));
    res.endWithoutBody();
  } else if (p.body === undefined) {
    res.end('', close);
  } else {
    res.end(p.body, close);
  }
}

/**
 * Writes a whole response in one corked batch. The caller guarantees `res` is still valid (not aborted/ended).
 * `corked`: the caller runs inside uWS's own callback (the route handler or a body chunk), where uWS has
 * corked the socket already; res.cork would only add a native call and a call back into JS per request.
 */
function write(res: UwsResponse, p: Prepared, isHead: boolean, close = false, corked = false): void {
  if (corked) writeCorked(res, p, isHead, close);
  else res.cork(() => writeCorked(res, p, isHead, close));
}

/**
 * Writes the status and headers of a streamed answer and hands its writer the body. uWS sends chunked
 * encoding for writes without a length; `write` answers false once it buffers (back-pressure), and
 * onWritable reports the drain. The caller guarantees `res` is valid, and calls connectionClosed() on abort.
 */
function startStream(res: UwsResponse, p: Prepared, logger: ServerConfig['logger']): BodyStream {
  res.cork(() => {
    if (p.status !== 200) res.writeStatus(p.statusLine);
    writeHeaders(res, p);
  });
  let drainCallbacks: (() => void)[] = [];
  res.onWritable(() => {
    const cbs = drainCallbacks;
    drainCallbacks = [];
    for (const cb of cbs) cb();
    return true;
  });
  const body = new BodyStream({
    write: (chunk) => {
      let ok = true;
      res.cork(() => {
        ok = res.write(chunk);
      });
      return ok;
    },
    end: (chunk) => res.cork(() => res.end(chunk ?? '')),
    onDrain: (cb) => drainCallbacks.push(cb),
  });
  try {
    p.stream!(body);
  } catch (err) {
    safeLog(logger, 'error', { err, backend: 'uws' }, 'http stream writer failed');
    body.end();
  }
  return body;
}

const TRANSFER_ENCODING = ['transfer-encoding'];

/** Copies the named headers that are present (uWS answers '' for an absent one). */
function copyHeaders(req: UwsRequest, names: readonly string[], headers: Record<string, string>): void {
  for (let i = 0; i < names.length; i++) {
    const v = req.getHeader(names[i]);
    if (v !== '') headers[names[i]] = v;
  }
}

/**
 * Copies the request headers out of uWS's request: every header (repeats joined), or just the named ones and,
 * for a path under one of `scoped`'s prefixes, that prefix's too (one native call per name).
 */
function headerReader(
  names: readonly string[] | undefined,
  scoped: readonly PrefixHeaders[] = [],
): (req: UwsRequest, path: string) => Record<string, string> {
  if (names === undefined) {
    return (req) => {
      const headers: Record<string, string> = {};
      req.forEach((k, v) => addHeader(headers, k, v));
      return headers;
    };
  }
  // Transfer-Encoding only matters without a Content-Length (the backend ignores it next to one): it is read
  // when Content-Length is absent, unless the handler names it.
  const readsTe = names.includes('transfer-encoding');
  const wanted = [...new Set(['content-length', ...names])];
  const extra = scoped.map((p) => ({ prefix: p.prefix, names: [...new Set(p.names)].filter((n) => !wanted.includes(n)) }));
  return (req, path) => {
    const headers: Record<string, string> = {};
    copyHeaders(req, wanted, headers);
    if (!readsTe && headers['content-length'] === undefined) copyHeaders(req, TRANSFER_ENCODING, headers);
    for (let i = 0; i < extra.length; i++) if (path.startsWith(extra[i].prefix)) copyHeaders(req, extra[i].names, headers);
    return headers;
  };
}

export async function startUwsServer(uws: UwsModule, cfg: ServerConfig, handler: HttpHandler): Promise<HttpServer> {
  const { logger, maxBodyBytes } = cfg;
  const readHeaders = headerReader(cfg.requestHeaders, cfg.prefixHeaders);
  const slots = new Slots(cfg.maxConcurrent);
  const rejectTooLarge = tooLarge(maxBodyBytes);
  let closed = false;
  /** Draining: every answer closes its connection (HttpServer.drain). */
  let closeAfter = false;
  const app = uws.App();

  const onRequest = (res: UwsResponse, req: UwsRequest): void => {
    // uWS's req is only valid during this synchronous call: everything is copied out before any await.
    const lower = req.getMethod();
    const method = METHODS.get(lower) ?? lower.toUpperCase();
    const isHead = method === 'HEAD';
    if (closed) {
      write(res, forMethod(BUSY, isHead), isHead, true);
      return;
    }
    if (!slots.tryAcquire()) {
      // answered inside the route callback: uWS skips the unread body
      write(res, forMethod(BUSY, isHead), isHead);
      return;
    }
    let released = false;
    const release = () => {
      if (!released) {
        released = true;
        slots.release();
      }
    };
    let phase: number = BODY;
    let aborted = false;
    let handlerRunning = false;
    let streaming: BodyStream | null = null;
    const path = req.getUrl();
    // After onAborted (or after end) the response object must not be touched again.
    res.onAborted(() => {
      aborted = true;
      streaming?.connectionClosed();
      phase = DONE;
      logAbort(logger, 'uws', method, path);
      if (!handlerRunning) release();
    });
    /** `corked`: called synchronously from uWS's route or body callback (see write). */
    const respond = (p: Prepared, close = false, corked = false) => {
      phase = DONE;
      if (!aborted && !closed) {
        try {
          if (p.stream) streaming = startStream(res, p, logger);
          else write(res, p, isHead, close || closeAfter, corked);
        } catch (err) {
          safeLog(logger, 'error', { err, backend: 'uws', method, path }, 'http response write failed');
        }
      }
      release();
    };

    try {
      const headers = readHeaders(req, path);
      // The address is read when the handler asks, while the response is still open.
      const ip = () => (phase === DONE ? '' : formatIp(new Uint8Array(res.getRemoteAddress())));
      const request = new Request(method, path, req.getQuery() ?? '', headers, ip);
      const contentLength = parseContentLength(headers['content-length']);
      if (contentLength === -1) {
        respond(forMethod(BAD_REQUEST, isHead), true);
        return;
      }
      if (contentLength !== undefined && contentLength > maxBodyBytes) {
        // without close, uWS reads and drops the announced body before the next request
        respond(forMethod(rejectTooLarge, isHead), contentLength - maxBodyBytes > DRAIN_MAX_BYTES);
        return;
      }

      const run = (body: Buffer) => {
        phase = HANDLER;
        request.body = body;
        handlerRunning = true;
        const out = runHandler(handler, request, logger);
        if (out instanceof Promise) {
          out.then((p) => {
            handlerRunning = false;
            respond(p);
          });
        } else {
          handlerRunning = false;
          respond(out, false, true);
        }
      };

      if (contentLength === 0 || (contentLength === undefined && headers['transfer-encoding'] === undefined)) {
        run(request.body);
        return;
      }
      let collector: BodyCollector | undefined;
      res.onData((chunk, isLast) => {
        // uWS keeps feeding the rest of a rejected body here after the 413 (drain); it is ignored
        if (phase !== BODY) return;
        try {
          // the ArrayBuffer is neutered after this callback: the bytes are copied
          if (isLast && collector === undefined) {
            // the whole body in one chunk (any small request): one copy, no collector
            if (chunk.byteLength > maxBodyBytes) respond(forMethod(rejectTooLarge, isHead));
            else run(chunk.byteLength === 0 ? EMPTY : Buffer.from(new Uint8Array(chunk)));
            return;
          }
          collector ??= new BodyCollector(maxBodyBytes, contentLength);
          if (!collector.push(new Uint8Array(chunk), true)) respond(forMethod(rejectTooLarge, isHead));
          else if (isLast) run(collector.finish());
        } catch (err) {
          safeLog(logger, 'error', { err, backend: 'uws', method, path }, 'http request body failed');
          respond(forMethod(BAD_REQUEST, isHead), true);
        }
      });
    } catch (err) {
      safeLog(logger, 'error', { err, backend: 'uws', method, path }, 'http request setup failed');
      if (phase !== DONE) respond(forMethod(BAD_REQUEST, isHead), true);
    }
  };

  // WebSocket routes take GET upgrade requests only (uWS yields others to the routes below).
  const ws = cfg.websocket ? attachUwsWebSocket(app, cfg.websocket, logger) : null;
  app.any('/*', onRequest);

  const listenSocket = await new Promise<us_listen_socket>((resolve, reject) => {
    // Exclusive: uWS otherwise sets SO_REUSEPORT, and a second node on the same port would "listen" too and
    // silently split the traffic with the first.
    (app as unknown as ListenWithOptions).listen(cfg.host, cfg.port, LIBUS_LISTEN_EXCLUSIVE_PORT, (socket) => {
      if (socket) resolve(socket);
      else bindFailure(cfg.host, cfg.port).then(reject, reject);
    });
  }).catch((err) => {
    closeApp(app);
    throw err;
  });
  const port = uws.us_socket_local_port(listenSocket);

  let closing: Promise<void> | undefined;
  let listening = true;
  const stopListening = () => {
    closeAfter = true;
    if (!listening) return;
    listening = false;
    uws.us_listen_socket_close(listenSocket);
  };
  return {
    backend: 'uws',
    port,
    wsConnections: () => ws?.count() ?? 0,
    drain: () => {
      closeAfter = true;
    },
    // Idle keep-alive connections stay until uWS's idle timeout or close(); a request on one is answered
    // and its connection closed.
    stopListening,
    inFlight: () => slots.inFlight,
    closeWebSockets: (code, reason) => ws?.closeAll(code, reason),
    close(): Promise<void> {
      if (!closing) {
        closed = true;
        stopListening();
        // drops every open connection; pending responses get onAborted
        closeApp(app);
        closing = new Promise<void>((resolve) => setImmediate(resolve));
      }
      return closing;
    },
  };
}

/**
 * uWS reports a failed listen without a reason; binding the same address with node:net names it (the port is
 * taken, the host is not local, ...).
 */
function bindFailure(host: string, port: number): Promise<ListenError> {
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (err: NodeJS.ErrnoException) => resolve(new ListenError(err.code ?? 'EUNKNOWN', host, port)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(new ListenError('EUNKNOWN', host, port))));
  });
}

function closeApp(app: TemplatedApp): void {
  const close = (app as unknown as { close?: () => void }).close;
  if (typeof close === 'function') close.call(app);
}
