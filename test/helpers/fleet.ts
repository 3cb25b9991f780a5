/**
 * A fleet on 127.0.0.1 for the fleet test and bench/fleet.ts: HAProxy run in the foreground with
 * deploy/haproxy.cfg (its bind addresses and servers replaced), its per-server state from the stats CSV,
 * and a steady JSON-RPC + REST read load whose every request is recorded.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from './devnet.js';

/** True when the haproxy binary runs here (scripts/setup.sh installs Debian's package). */
export function haproxyInstalled(): boolean {
  try {
    return spawnSync('haproxy', ['-v'], { stdio: 'ignore' }).status === 0;
  } catch {
    return false;
  }
}

export interface Haproxy {
  proc: ChildProcess;
  /** The load-balanced frontend, e.g. http://127.0.0.1:26350 */
  url: string;
  statsUrl: string;
  logs: string[];
  stop(): Promise<void>;
}

/**
 * deploy/haproxy.cfg with the frontend on `port`, the stats page on `statsPort` and the servers between its
 * `# servers:` markers replaced by `servers` (name -> host:port).
 */
export function fleetConfig(port: number, statsPort: number, servers: Record<string, string>): string {
  const cfg = readFileSync(join(REPO, 'deploy/haproxy.cfg'), 'utf8');
  const lines = Object.entries(servers).map(([name, addr]) => `    server ${name} ${addr} check`);
  const out = cfg
    .replace(/^ {4}bind :8545$/m, `    bind 127.0.0.1:${port}`)
    .replace(/^ {4}bind 127\.0\.0\.1:8404$/m, `    bind 127.0.0.1:${statsPort}`)
    .replace(/(# servers: begin\n)[\s\S]*?(\n {4}# servers: end)/, `$1${lines.join('\n')}$2`);
  if (out === cfg || !out.includes(`127.0.0.1:${port}`) || !out.includes(`127.0.0.1:${statsPort}`)) {
    throw new Error('deploy/haproxy.cfg no longer has the bind lines or server markers the fleet helpers replace');
  }
  return out;
}

/** Starts HAProxy in the foreground (-db) with `cfg` written to `dir`; resolves once its stats page answers. */
export async function startHaproxy(dir: string, cfg: string, port: number, statsPort: number): Promise<Haproxy> {
  const file = join(dir, 'haproxy.cfg');
  writeFileSync(file, cfg);
  const check = spawnSync('haproxy', ['-c', '-f', file], { encoding: 'utf8' });
  if (check.status !== 0) throw new Error(`haproxy -c refused the config: ${check.stdout}${check.stderr}`);
  const proc = spawn('haproxy', ['-db', '-f', file], { stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: string[] = [];
  proc.stdout?.on('data', (d) => logs.push(String(d)));
  proc.stderr?.on('data', (d) => logs.push(String(d)));
  const h: Haproxy = {
    proc,
    url: `http://127.0.0.1:${port}`,
    statsUrl: `http://127.0.0.1:${statsPort}/stats;csv`,
    logs,
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const done = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
      proc.kill('SIGTERM');
      await done;
    },
  };
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`haproxy exited: ${logs.join('')}`);
    try {
      await haproxyServers(h);
      return h;
    } catch (err) {
      if (Date.now() > deadline) {
        await h.stop();
        throw new Error(`haproxy stats did not answer: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

export interface ServerState {
  /** UP, DOWN, "UP 1/2" (going down), "DOWN 1/2" (going up), MAINT, no check... */
  status: string;
  /** Sessions (requests on a closed connection, connections when kept alive) sent to it so far. */
  stot: number;
  /** Requests answered per HTTP class. */
  hrsp2xx: number;
}

/** Per-server state of the backend from HAProxy's stats CSV. */
export async function haproxyServers(h: Haproxy, backend = 'native_nodes'): Promise<Map<string, ServerState>> {
  const text = await (await fetch(h.statsUrl, { signal: AbortSignal.timeout(5000) })).text();
  const [header, ...rows] = text.trim().split('\n');
  const cols = header.replace(/^# /, '').split(',');
  const at = (name: string) => cols.indexOf(name);
  const out = new Map<string, ServerState>();
  for (const row of rows) {
    const f = row.split(',');
    if (f[at('pxname')] !== backend || f[at('svname')] === 'BACKEND') continue;
    out.set(f[at('svname')], { status: f[at('status')], stot: Number(f[at('stot')]), hrsp2xx: Number(f[at('hrsp_2xx')]) });
  }
  return out;
}

/** One request of the load: when it started and ended, and whether it got a right answer. */
export interface LoadSample {
  start: number;
  end: number;
  ok: boolean;
  kind: 'rpc' | 'rest';
  error?: string;
}

/**
 * A steady read load through `url`: `workers` loops, each alternating eth_getBalance (POST /rpc) and GET
 * /chain/blocks/{h} for h in 1..maxHeight. A request fails when it throws, does not answer 200, or answers
 * something else than the expected shape.
 */
export class ReadLoad {
  readonly samples: LoadSample[] = [];
  private running = true;
  private readonly loops: Promise<void>[] = [];
  inFlight = 0;

  constructor(
    private readonly url: string,
    workers: number,
    private readonly maxHeight: number,
  ) {
    for (let i = 0; i < workers; i++) this.loops.push(this.loop(i));
  }

  private async one(kind: 'rpc' | 'rest', n: number): Promise<void> {
    const start = Date.now();
    this.inFlight++;
    try {
      if (kind === 'rpc') {
        const addr = `0x${(n % 251).toString(16).padStart(40, '0')}`;
        const r = await fetch(`${this.url}/rpc`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ jsonrpc: '2.0', id: n, method: 'eth_getBalance', params: [addr, 'latest'] }),
          signal: AbortSignal.timeout(15_000),
        });
        const body = (await r.json()) as { result?: unknown };
        if (r.status !== 200 || typeof body.result !== 'string') throw new Error(`status ${r.status} ${JSON.stringify(body)}`);
      } else {
        const h = 1 + (n % this.maxHeight);
        const r = await fetch(`${this.url}/chain/blocks/${h}`, { signal: AbortSignal.timeout(15_000) });
        const body = (await r.json()) as { index?: unknown };
        if (r.status !== 200 || body.index !== h) throw new Error(`status ${r.status} ${JSON.stringify(body).slice(0, 200)}`);
      }
      this.samples.push({ start, end: Date.now(), ok: true, kind });
    } catch (err) {
      const e = err as Error & { cause?: Error };
      this.samples.push({
        start,
        end: Date.now(),
        ok: false,
        kind,
        error: `${e.message}${e.cause ? `: ${e.cause.message}` : ''}`,
      });
    } finally {
      this.inFlight--;
    }
  }

  private async loop(i: number): Promise<void> {
    let n = i;
    while (this.running) {
      await this.one(n % 2 === 0 ? 'rpc' : 'rest', n);
      n += 7;
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  /** Samples that ended within [from, to] (ms). */
  between(from: number, to: number): LoadSample[] {
    return this.samples.filter((s) => s.end >= from && s.end <= to);
  }
}

/** Failures, the slowest request and the longest time without any answer in a window of samples. */
export function summarize(samples: LoadSample[]): { requests: number; failed: number; slowestMs: number; longestGapMs: number } {
  const ends = samples.map((s) => s.end).sort((a, b) => a - b);
  let gap = 0;
  for (let i = 1; i < ends.length; i++) gap = Math.max(gap, ends[i] - ends[i - 1]);
  return {
    requests: samples.length,
    failed: samples.filter((s) => !s.ok).length,
    slowestMs: samples.reduce((m, s) => Math.max(m, s.end - s.start), 0),
    longestGapMs: gap,
  };
}
