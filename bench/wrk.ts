import { spawn } from 'node:child_process';
import { accessSync, constants, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/** What one wrk run reports (Requests/sec, the 99% line of --latency, error counters). */
export interface WrkResult {
  rps: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  socketErrors: number;
}

export interface WrkOptions {
  seconds: number;
  threads: number;
  connections: number;
  /** Lua script (for POST bodies); GET without one. */
  script?: string;
  /** Per-request timeout (wrk's default of 2 s would drop the slowest peer batches from the latency). */
  timeoutSecs?: number;
  /** Run wrk pinned to these CPUs (taskset list syntax), away from the server under load. */
  cpus?: string;
}

/** The wrk binary on PATH (or /usr/bin/wrk), undefined when not installed. */
export function findWrk(): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin', '/usr/local/bin'];
  for (const dir of dirs) {
    const p = join(dir, 'wrk');
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  return undefined;
}

/** Writes a wrk Lua script that POSTs `body` as JSON; returns its path. */
export function writePostScript(dir: string, name: string, body: string): string {
  if (body.includes(']==]')) throw new Error('body cannot be quoted as a Lua long string');
  const path = join(dir, `${name}.lua`);
  writeFileSync(
    path,
    ['wrk.method = "POST"', 'wrk.headers["Content-Type"] = "application/json"', `wrk.body = [==[${body}]==]`, ''].join('\n'),
  );
  return path;
}

/** The command line as run (for the results file). */
export function wrkArgs(url: string, o: WrkOptions): string[] {
  return [
    `-t${o.threads}`,
    `-c${o.connections}`,
    `-d${o.seconds}s`,
    ...(o.timeoutSecs ? ['--timeout', `${o.timeoutSecs}s`] : []),
    '--latency',
    ...(o.script ? ['-s', o.script] : []),
    url,
  ];
}

const UNIT_MS: Record<string, number> = { us: 0.001, ms: 1, s: 1000, m: 60_000 };

/** Parses wrk 4 output; throws when the summary lines are missing. */
export function parseWrk(out: string): WrkResult {
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(out);
  const p99 = /^\s*99%\s+([\d.]+)(us|ms|s|m)\s*$/m.exec(out);
  const reqs = /(\d+) requests in /.exec(out);
  if (!rps || !p99 || !reqs) throw new Error(`unexpected wrk output: ${out.slice(0, 300)}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(out);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(out);
  return {
    rps: Number(rps[1]),
    p99Ms: Number(p99[1]) * UNIT_MS[p99[2]],
    requests: Number(reqs[1]),
    non2xx: non2xx ? Number(non2xx[1]) : 0,
    socketErrors: sock ? sock.slice(1).reduce((a, b) => a + Number(b), 0) : 0,
  };
}

/** Runs wrk once, bounded by its duration plus a grace period (killed beyond). */
export function runWrk(wrk: string, url: string, o: WrkOptions): Promise<WrkResult> {
  return new Promise((resolve, reject) => {
    const [cmd, args] = o.cpus ? ['taskset', ['-c', o.cpus, wrk, ...wrkArgs(url, o)]] : [wrk, wrkArgs(url, o)];
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), (o.seconds + 15) * 1000);
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`wrk exited with ${code ?? signal}: ${(err || out).trim().slice(0, 300)}`));
      try {
        const r = parseWrk(out);
        if (r.requests === 0) throw new Error(`no request completed within ${o.seconds} s`);
        resolve(r);
      } catch (e) {
        reject(e);
      }
    });
  });
}
