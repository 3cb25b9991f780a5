import { createServer } from 'node:http';
import { loadUws } from '../ts/http/uws.js';

/**
 * Reference server for the HTTP load bench: the same two HTTP stacks as the node (uWS, node:http) with no
 * node logic. It parses each POST body and answers every JSON-RPC object with `"result":"0x0"`, so its
 * requests/s are the ceiling of each backend on this machine. Prints `listening <port>` once ready.
 * Usage: node dist/bench/http-bare-server.js uws|node
 */

const answer = (body: string): string => {
  const one = (r: { id?: unknown }) => ({ jsonrpc: '2.0', id: r?.id ?? null, result: '0x0' });
  const req = JSON.parse(body);
  return JSON.stringify(Array.isArray(req) ? req.map(one) : one(req));
};

const ready = (port: number) => process.stdout.write(`listening ${port}\n`);
const backend = process.argv[2];

if (backend === 'uws') {
  const uws = loadUws().mod;
  if (!uws) throw new Error('uWS binary did not load');
  const app = uws.App();
  app.any('/*', (res, req) => {
    let aborted = false;
    res.onAborted(() => (aborted = true));
    if (req.getMethod().toUpperCase() !== 'POST') {
      res.cork(() => res.writeHeader('content-type', 'application/json').end('{"balance":0}'));
      return;
    }
    const chunks: Buffer[] = [];
    res.onData((chunk, isLast) => {
      chunks.push(Buffer.from(chunk.slice(0)));
      if (!isLast || aborted) return;
      const out = answer(Buffer.concat(chunks).toString('utf8'));
      res.cork(() => res.writeHeader('content-type', 'application/json').end(out));
    });
  });
  app.listen('127.0.0.1', 0, (socket) => {
    if (!socket) throw new Error('uWS could not listen');
    ready(uws.us_socket_local_port(socket));
  });
} else if (backend === 'node') {
  const server = createServer({ noDelay: true }, (req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => {
      const out = req.method === 'POST' ? answer(body) : '{"balance":0}';
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(out) });
      res.end(out);
    });
  });
  server.keepAliveTimeout = 10_000;
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    ready(typeof addr === 'object' && addr ? addr.port : 0);
  });
} else {
  process.stderr.write('usage: http-bare-server.js uws|node\n');
  process.exit(2);
}
process.on('SIGTERM', () => process.exit(0));
