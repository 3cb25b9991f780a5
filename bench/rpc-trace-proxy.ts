/**
 * A JSON-RPC recording proxy for benches: listens on 127.0.0.1, forwards every POST to a target server over
 * one keep-alive connection pool, and records each request's methods and the target's latency (from the
 * request sent to the last byte of the answer). bench/hardhat-oracle-trace.ts puts it in front of our node
 * and of the Hardhat node to compare a test suite's traffic method by method.
 */
import { Agent, type IncomingMessage, type Server, createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface TracedRequest {
  /** The methods of the request (one, or a batch's in order). */
  methods: string[];
  /** Milliseconds from forwarding the request to the answer's last byte. */
  ms: number;
  /** When the proxy received it (ms since the proxy started). */
  at: number;
  /** Whether any answer carried a JSON-RPC error (code, for the first one). */
  errorCode?: number;
}

export interface TraceProxy {
  port: number;
  readonly requests: TracedRequest[];
  close(): Promise<void>;
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function methodsOf(body: Buffer): string[] {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { method?: string } | { method?: string }[];
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.map((r) => String(r?.method ?? '?'));
  } catch {
    return ['(unparsable)'];
  }
}

function errorCodeOf(body: Buffer): number | undefined {
  try {
    const parsed = JSON.parse(body.toString('utf8')) as { error?: { code?: number } } | { error?: { code?: number } }[];
    const list = Array.isArray(parsed) ? parsed : [parsed];
    return list.find((r) => r?.error)?.error?.code;
  } catch {
    return undefined;
  }
}

/** Start a proxy to http://127.0.0.1:<targetPort><targetPath>. */
export async function startTraceProxy(targetPort: number, targetPath: string): Promise<TraceProxy> {
  const agent = new Agent({ keepAlive: true, maxSockets: 16 });
  const requests: TracedRequest[] = [];
  const t0 = performance.now();
  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const at = performance.now() - t0;
    const start = performance.now();
    const up = request(
      {
        host: '127.0.0.1',
        port: targetPort,
        path: targetPath,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'content-length': body.length },
      },
      async (answer) => {
        const out = await readBody(answer);
        const ms = performance.now() - start;
        requests.push({ methods: methodsOf(body), ms, at, errorCode: errorCodeOf(out) });
        res.writeHead(answer.statusCode ?? 502, { 'content-type': 'application/json', 'content-length': out.length });
        res.end(out);
      },
    );
    up.on('error', (err) => {
      res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(String(err));
    });
    up.end(body);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}

export interface MethodTotals {
  method: string;
  count: number;
  totalMs: number;
  errors: number;
}

/** Per method (a batch counted under its methods joined by '+'): count, summed latency, answers with errors. */
export function totalsByMethod(requests: readonly TracedRequest[]): Map<string, MethodTotals> {
  const out = new Map<string, MethodTotals>();
  for (const r of requests) {
    const method = r.methods.join('+');
    const t = out.get(method) ?? { method, count: 0, totalMs: 0, errors: 0 };
    t.count++;
    t.totalMs += r.ms;
    if (r.errorCode !== undefined) t.errors++;
    out.set(method, t);
  }
  return out;
}
