/** WebSocket endpoint on the node:http backend, through the `ws` library (pinned in package.json). */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { type WebSocket, WebSocketServer } from 'ws';
import { Request, addHeader, normalizeIp, safeLog, statusLine, upgradeRefusal } from './common.js';
import type { HttpLogger, WsEndpoint } from './types.js';

/** Answer an upgrade request with a plain HTTP status and close the socket. */
function refuse(socket: Duplex, status: number): void {
  socket.end(`HTTP/1.1 ${statusLine(status)}\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
}

/** Serve `ep` on the server's upgrade requests; returns the live connection count and a close-all function. */
export function attachNodeWebSocket(
  server: Server,
  ep: WsEndpoint,
  logger: HttpLogger,
): { count: () => number; closeAll: () => void; closeWith: (code: number, reason: string) => void } {
  const wss = new WebSocketServer({ noServer: true, maxPayload: ep.maxMessageBytes, perMessageDeflate: false });
  const alive = new Map<WebSocket, boolean>();
  const paths = new Set(ep.paths);

  server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => undefined);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q === -1 ? url : url.slice(0, q);
    if (!paths.has(path) || (req.headers.upgrade ?? '').toLowerCase() !== 'websocket') return refuse(socket, 404);
    const headers: Record<string, string> = {};
    const raw = req.rawHeaders;
    for (let i = 0; i + 1 < raw.length; i += 2) addHeader(headers, raw[i].toLowerCase(), raw[i + 1]);
    const request = new Request(
      'GET',
      path,
      q === -1 ? '' : url.slice(q + 1),
      headers,
      normalizeIp(req.socket.remoteAddress ?? ''),
    );
    const status = upgradeRefusal(ep, request, alive.size, logger, 'node');
    if (status !== null) return refuse(socket, status);
    wss.handleUpgrade(req, socket, head, (ws) => {
      alive.set(ws, true);
      let closed = false;
      const handlers = ep.open(
        {
          ip: request.ip,
          send: (text) => {
            if (closed || ws.readyState !== ws.OPEN) return false;
            ws.send(text);
            // A client that does not read: its queue would grow without bound; it is dropped instead.
            if (ws.bufferedAmount > ep.maxBufferedBytes) {
              ws.terminate();
              return false;
            }
            return true;
          },
          close: (code = 1000, reason = '') => {
            if (!closed) ws.close(code, reason);
          },
          bufferedBytes: () => (closed ? 0 : ws.bufferedAmount),
        },
        request,
      );
      ws.on('message', (data: Buffer | ArrayBuffer | Buffer[]) => {
        alive.set(ws, true);
        const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
        handlers.message(buf);
      });
      ws.on('pong', () => alive.set(ws, true));
      ws.on('error', () => undefined);
      ws.on('close', (code: number) => {
        closed = true;
        alive.delete(ws);
        try {
          handlers.closed(code);
        } catch (err) {
          safeLog(logger, 'error', { err, backend: 'node' }, 'websocket close handler failed');
        }
      });
    });
  });

  // Heartbeat: a peer silent for a whole period after a ping is gone (uWS does the same natively).
  const period = Math.max(1, ep.idleTimeoutSecs) * 1000;
  const heartbeat = setInterval(() => {
    for (const [ws, ok] of alive) {
      if (!ok) {
        ws.terminate();
        continue;
      }
      alive.set(ws, false);
      ws.ping();
    }
  }, period);
  heartbeat.unref();

  return {
    count: () => alive.size,
    // A closing handshake (the client reads the code), unlike closeAll's terminate.
    closeWith: (code, reason) => {
      for (const ws of alive.keys()) ws.close(code, reason);
    },
    closeAll: () => {
      clearInterval(heartbeat);
      for (const ws of alive.keys()) ws.terminate();
      wss.close();
    },
  };
}
