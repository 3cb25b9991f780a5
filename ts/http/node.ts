/** node:http backend. */
import { createServer, type IncomingMessage, type OutgoingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  BAD_REQUEST,
  BUSY,
  BodyCollector,
  BodyStream,
  DRAIN_MAX_BYTES,
  forMethod,
  KEEP_ALIVE_TIMEOUT_MS,
  logAbort,
  normalizeIp,
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
import { type HttpHandler, type HttpServer, ListenError } from './types.js';
import { attachNodeWebSocket } from './ws-node.js';

/** Request phases: reading the body, in the handler, answered. */
const BODY = 0;
const HANDLER = 1;
const DONE = 2;

/** Writes the status and headers of a streamed answer and hands its writer the body (chunked encoding). */
function startStream(res: ServerResponse, p: Prepared, logger: ServerConfig['logger']): BodyStream {
  const headers: OutgoingHttpHeaders = {};
  for (const [k, v] of p.headers) headers[k] = v;
  res.writeHead(p.status, headers);
  res.flushHeaders();
  const body = new BodyStream({
    write: (chunk) => res.write(chunk),
    end: (chunk) => (chunk ? res.end(chunk) : res.end()),
    onDrain: (cb) => res.once('drain', cb),
  });
  try {
    p.stream!(body);
  } catch (err) {
    safeLog(logger, 'error', { err, backend: 'node' }, 'http stream writer failed');
    res.destroy();
  }
  return body;
}

function write(res: ServerResponse, p: Prepared, close = false): void {
  const headers: OutgoingHttpHeaders = {};
  for (const [k, v] of p.headers) headers[k] = v;
  if (!p.noBody) headers['content-length'] = p.length;
  if (close) headers.connection = 'close';
  res.writeHead(p.status, headers);
  if (p.body === undefined) res.end();
  else res.end(p.body);
}

export async function startNodeServer(cfg: ServerConfig, handler: HttpHandler): Promise<HttpServer> {
  const { logger, maxBodyBytes } = cfg;
  const slots = new Slots(cfg.maxConcurrent);
  const rejectTooLarge = tooLarge(maxBodyBytes);
  let closed = false;
  /** Draining: every answer closes its connection (HttpServer.drain). */
  let closeAfter = false;

  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    if (closed) {
      res.destroy();
      return;
    }
    const method = (req.method ?? 'GET').toUpperCase();
    const isHead = method === 'HEAD';
    if (!slots.tryAcquire()) {
      // node:http discards the unread body itself once the response is finished
      write(res, forMethod(BUSY, isHead));
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
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    const respond = (p: Prepared, close = false) => {
      phase = DONE;
      if (!aborted && !closed && !res.destroyed && !res.writableEnded) {
        try {
          if (p.stream) streaming = startStream(res, p, logger);
          else write(res, p, close || closeAfter);
        } catch (err) {
          safeLog(logger, 'error', { err, backend: 'node', method, path }, 'http response write failed');
          res.destroy();
        }
      }
      release();
    };

    res.on('close', () => {
      streaming?.connectionClosed();
      if (res.writableEnded) return;
      aborted = true;
      logAbort(logger, 'node', method, path);
      if (!handlerRunning) release();
    });
    try {
      const headers: Record<string, string> = {};
      const raw = req.rawHeaders;
      for (let i = 0; i + 1 < raw.length; i += 2) addHeader(headers, raw[i].toLowerCase(), raw[i + 1]);
      const request = new Request(
        method,
        path,
        q === -1 ? '' : url.slice(q + 1),
        headers,
        normalizeIp(req.socket.remoteAddress ?? ''),
      );
      const contentLength = parseContentLength(headers['content-length']);
      if (contentLength === -1) {
        respond(forMethod(BAD_REQUEST, isHead), true);
        return;
      }
      if (contentLength !== undefined && contentLength > maxBodyBytes) {
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
          respond(out);
        }
      };

      if (contentLength === 0 || (contentLength === undefined && headers['transfer-encoding'] === undefined)) {
        run(request.body);
        return;
      }
      const collector = new BodyCollector(maxBodyBytes);
      req.on('error', () => {
        // client went away mid-body; 'close' on the response does the bookkeeping
      });
      req.on('data', (chunk: Buffer) => {
        if (phase !== BODY) return; // after a 413 the rest is read and dropped (drained)
        if (!collector.push(chunk, false)) respond(forMethod(rejectTooLarge, isHead));
      });
      req.on('end', () => {
        if (phase === BODY && !aborted) run(collector.finish());
      });
    } catch (err) {
      safeLog(logger, 'error', { err, backend: 'node', method, path }, 'http request setup failed');
      respond(forMethod(BAD_REQUEST, isHead), true);
    }
  };

  const server = createServer({ noDelay: true }, onRequest);
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = 20_000;
  server.requestTimeout = 60_000;
  const ws = cfg.websocket ? attachNodeWebSocket(server, cfg.websocket, logger) : null;
  await new Promise<void>((resolve, reject) => {
    const onError = (err: NodeJS.ErrnoException) => {
      server.off('listening', onListening);
      reject(err.code ? new ListenError(err.code, cfg.host, cfg.port) : err);
    };
    const onListening = () => {
      server.off('error', onError);
      resolve();
    };
    server.once('error', onError);
    server.once('listening', onListening);
    server.listen({ host: cfg.host, port: cfg.port, exclusive: true });
  });
  server.on('error', (err) => safeLog(logger, 'error', { err, backend: 'node' }, 'http server error'));
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  /** Resolves once the listener is closed and the last connection has ended. */
  let serverClosed: Promise<void> | undefined;
  const closeServer = () => (serverClosed ??= new Promise<void>((resolve) => server.close(() => resolve())));
  const stopListening = () => {
    closeAfter = true;
    if (serverClosed) return;
    // Stops accepting; the idle keep-alive connections close now, the busy ones once their answer (with
    // Connection: close) is written.
    void closeServer();
    server.closeIdleConnections();
  };
  return {
    backend: 'node',
    port,
    wsConnections: () => ws?.count() ?? 0,
    drain: () => {
      closeAfter = true;
    },
    stopListening,
    inFlight: () => slots.inFlight,
    closeWebSockets: (code, reason) => ws?.closeWith(code, reason),
    close(): Promise<void> {
      if (!closing) {
        closed = true;
        ws?.closeAll();
        const done = closeServer();
        server.closeAllConnections();
        closing = done;
      }
      return closing;
    },
  };
}
