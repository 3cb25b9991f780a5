/** WebSocket endpoint on the uWS backend: uWebSockets.js serves the upgrade, frames and back-pressure natively. */
import type {
  HttpRequest as UwsRequest,
  HttpResponse as UwsResponse,
  TemplatedApp,
  WebSocket,
  us_socket_context_t,
} from '@trufflesuite/uws-js-unofficial';
import { Request, addHeader, formatIp, safeLog, statusLine, upgradeRefusal } from './common.js';
import type { HttpLogger, WsEndpoint, WsHandlers } from './types.js';

interface Conn {
  request: Request;
  handlers?: WsHandlers;
  closed: boolean;
}

/** Refuse an upgrade with an HTTP status and an empty body. */
function refuse(res: UwsResponse, status: number): void {
  res.cork(() => {
    res.writeStatus(statusLine(status));
    res.end();
  });
}

/** Serve `ep` on `app`; returns the live connection count and a close-all function (code and reason sent). */
export function attachUwsWebSocket(
  app: TemplatedApp,
  ep: WsEndpoint,
  logger: HttpLogger,
): { count: () => number; closeAll: (code: number, reason: string) => void } {
  const live = new Set<WebSocket<Conn>>();
  const behavior = {
    maxPayloadLength: ep.maxMessageBytes,
    // uWS holds at most this much for a slow reader; a send beyond it is dropped and the socket closed.
    maxBackpressure: ep.maxBufferedBytes,
    closeOnBackpressureLimit: 1,
    idleTimeout: ep.idleTimeoutSecs,
    sendPingsAutomatically: true,
    upgrade: (res: UwsResponse, req: UwsRequest, context: us_socket_context_t) => {
      // req is valid only during this call: everything is copied out first.
      const headers: Record<string, string> = {};
      req.forEach((k, v) => addHeader(headers, k, v));
      const ip = formatIp(new Uint8Array(res.getRemoteAddress()));
      const request = new Request('GET', req.getUrl(), req.getQuery() ?? '', headers, ip);
      const status = upgradeRefusal(ep, request, live.size, logger, 'uws');
      if (status !== null) return refuse(res, status);
      const conn: Conn = { request, closed: false };
      res.upgrade(
        conn,
        headers['sec-websocket-key'] ?? '',
        headers['sec-websocket-protocol'] ?? '',
        headers['sec-websocket-extensions'] ?? '',
        context,
      );
    },
    open: (ws: WebSocket<Conn>) => {
      const c = ws.getUserData();
      live.add(ws);
      const drop = () => {
        if (!c.closed) ws.close();
      };
      c.handlers = ep.open(
        {
          ip: c.request.ip,
          send: (text) => {
            if (c.closed) return false;
            // 2: dropped at the back-pressure limit (uWS then closes the socket itself).
            if (ws.send(text, false) === 2) return false;
            if (ws.getBufferedAmount() > ep.maxBufferedBytes) {
              drop();
              return false;
            }
            return true;
          },
          close: (code = 1000, reason = '') => {
            if (!c.closed) ws.end(code, reason);
          },
          bufferedBytes: () => (c.closed ? 0 : ws.getBufferedAmount()),
        },
        c.request,
      );
    },
    message: (ws: WebSocket<Conn>, message: ArrayBuffer) => {
      // The ArrayBuffer is neutered after this callback: copy it.
      ws.getUserData().handlers?.message(Buffer.from(new Uint8Array(message)));
    },
    close: (ws: WebSocket<Conn>, code: number) => {
      const c = ws.getUserData();
      c.closed = true;
      live.delete(ws);
      try {
        c.handlers?.closed(code);
      } catch (err) {
        safeLog(logger, 'error', { err, backend: 'uws' }, 'websocket close handler failed');
      }
    },
  };
  for (const path of ep.paths) app.ws(path, behavior as never);
  return {
    count: () => live.size,
    closeAll: (code, reason) => {
      for (const ws of [...live]) if (!ws.getUserData().closed) ws.end(code, reason);
    },
  };
}
