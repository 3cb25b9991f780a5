/**
 * The API port while a node joins by state sync (docs/p2p.md, "State sync", "Joining"): `/health`,
 * `/native_status` (sync_info with the restore's progress) and `/metrics` answer; every other request is
 * refused as "node is syncing" — REST 503, JSON-RPC -32000 — so no read ever sees a partial state. It closes
 * once the state is complete and the node's own API takes the port.
 */
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { StateSyncStatus } from '../sync/index.js';

export const NODE_SYNCING = 'node is syncing';

export interface StateSyncServerOptions {
  host: string;
  port: number;
  nodeName: string;
  chainId: number;
  status: () => StateSyncStatus;
  peers: () => number;
}

/** Listening on host:port; resolves once it is (rejects when the port is taken). */
export async function startStateSyncServer(o: StateSyncServerOptions): Promise<{ port: number; close(): Promise<void> }> {
  const started = Date.now();
  const server: Server = createServer((req, res) => answer(o, started, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : o.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function answer(o: StateSyncServerOptions, started: number, req: IncomingMessage, res: ServerResponse): void {
  const path = (req.url ?? '/').split('?')[0];
  const send = (code: number, body: unknown, type = 'application/json') => {
    res.writeHead(code, { 'content-type': type });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
  const s = o.status();
  if (req.method === 'GET' && path === '/health') send(200, { status: 'ok', node: o.nodeName });
  else if (req.method === 'GET' && path === '/native_status')
    send(200, {
      chain_id: o.chainId,
      sync_info: {
        latest_block_height: null,
        earliest_block_height: s.snapshot_height,
        syncing: true,
        catching_up: true,
        target_height: s.snapshot_height,
        peers: o.peers(),
        state_sync: s,
      },
      uptime_seconds: Math.floor((Date.now() - started) / 1000),
    });
  else if (req.method === 'GET' && path === '/metrics')
    send(
      200,
      [
        '# HELP native_state_sync_chunks_done Snapshot chunks restored.',
        '# TYPE native_state_sync_chunks_done gauge',
        `native_state_sync_chunks_done ${s.chunks_done}`,
        '# HELP native_state_sync_chunks_total Snapshot chunks to restore.',
        '# TYPE native_state_sync_chunks_total gauge',
        `native_state_sync_chunks_total ${s.chunks_total}`,
        '',
      ].join('\n'),
      'text/plain; version=0.0.4',
    );
  else if (req.method === 'POST' && (path === '/rpc' || path === '/')) {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= 1 << 20) chunks.push(c);
    });
    req.on('end', () => send(200, rpcRefusal(Buffer.concat(chunks).toString('utf8'))));
  } else send(503, { error: NODE_SYNCING, code: 'UNAVAILABLE' });
}

/** The JSON-RPC answer to a request or batch: each call -32000 "node is syncing", with its id. */
function rpcRefusal(text: string): unknown {
  const error = (id: unknown) => ({ jsonrpc: '2.0', id: id ?? null, error: { code: -32000, message: NODE_SYNCING } });
  try {
    const parsed = JSON.parse(text) as unknown;
    if (Array.isArray(parsed)) return parsed.map((c) => error((c as { id?: unknown })?.id));
    return error((parsed as { id?: unknown })?.id);
  } catch {
    return error(null);
  }
}
