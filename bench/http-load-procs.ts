import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from './proc-cpu.js';

/** Server processes of the HTTP load bench: our node on both backends, ganache and hardhat as peers. */

export const GANACHE_VERSION = '7.9.2';
export const HARDHAT_VERSION = '2.29.1';
/** Gitignored install folder of the peers (never in the project's package.json). */
export const PEERS_DIR = fileURLToPath(new URL('../../bench/.peers/', import.meta.url));
const GANACHE_CLI = join(PEERS_DIR, 'node_modules/ganache/dist/node/cli.js');
const HARDHAT_CLI = join(PEERS_DIR, 'node_modules/hardhat/internal/cli/bootstrap.js');
/** Hardhat refuses a config outside the folder it is installed in, so its project lives in PEERS_DIR. */
const HARDHAT_PROJECT = join(PEERS_DIR, 'hardhat-project');
const MAIN = fileURLToPath(new URL('../ts/node/main.js', import.meta.url));
const BARE = fileURLToPath(new URL('./http-bare-server.js', import.meta.url));
export const DEV_MNEMONIC = 'test test test test test test test test test test test junk';

export interface Server {
  name: string;
  child: ChildProcess;
  port: number;
  /** JSON-RPC path: /rpc on our node, / on the others. */
  rpcPath: string;
  /** native: our node; peer: ganache/hardhat; bare: reference server without node logic (ceiling). */
  kind: 'native' | 'peer' | 'bare';
}

const live = new Set<ChildProcess>();

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal); // detached: the child leads its own process group
  } catch {
    try {
      child.kill(signal);
    } catch {}
  }
}

// Last resort when the bench process exits without stopping its servers (exception, process.exit).
process.on('exit', () => {
  for (const c of live) killGroup(c, 'SIGKILL');
});

/** Spawns in a new process group (so wrappers' children go down too) and tracks the child. */
function spawnTracked(cmd: string, args: string[], opts: SpawnOptions): ChildProcess {
  const child = spawn(cmd, args, { ...opts, detached: true });
  live.add(child);
  child.once('exit', () => live.delete(child));
  return child;
}

const exited = (c: ChildProcess) => c.exitCode !== null || c.signalCode !== null;

/** SIGTERM to the process group, SIGKILL after `graceMs`. */
export async function stopServer(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (exited(child)) return;
  const done = new Promise((r) => child.once('exit', r));
  killGroup(child, 'SIGTERM');
  const timer = setTimeout(() => killGroup(child, 'SIGKILL'), graceMs);
  await done;
  clearTimeout(timer);
  killGroup(child, 'SIGKILL'); // leftovers of the group, if any
}

export async function stopAll(): Promise<void> {
  await Promise.all([...live].map((c) => stopServer(c)));
}

/** A free TCP port on 127.0.0.1 (closed again; the peer binds it right after). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** Polls eth_chainId until it answers, the child exits or the deadline passes. */
async function waitForRpc(s: Server, deadlineMs: number, stderr: () => string): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    if (exited(s.child)) throw new Error(`${s.name} exited early: ${stderr().trim().slice(-400)}`);
    try {
      const r = await fetch(`http://127.0.0.1:${s.port}${s.rpcPath}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId","params":[]}',
        signal: AbortSignal.timeout(2000),
      });
      if (r.ok && typeof ((await r.json()) as { result?: unknown }).result === 'string') return;
    } catch {}
    if (Date.now() > until) throw new Error(`${s.name} did not answer eth_chainId within ${deadlineMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** Keeps the last few KiB of a stream for error messages. */
function tail(child: ChildProcess): () => string {
  let buf = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (buf = (buf + d).slice(-4096)));
  return () => buf;
}

/** Waits for `re` (port in group 1) on the child's stdout, then keeps draining it. */
function portFromStdout(child: ChildProcess, name: string, re: RegExp, stderr: () => string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let buf = '';
    const timer = setTimeout(() => reject(new Error(`${name} did not report its port within 60 s`)), 60_000);
    const onData = (d: Buffer) => {
      buf = (buf + d.toString()).slice(-65536);
      const m = re.exec(buf);
      if (m) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stdout?.resume(); // keep draining the log
        resolve(Number(m[1]));
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code}: ${stderr().trim().slice(-400)}`));
    });
  });
}

/** CPU milliseconds a process has used, every thread (Linux /proc; undefined elsewhere). */
export function processCpuMs(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    return cpuSeconds(pid) * 1000;
  } catch {
    return undefined;
  }
}

/** Reference server (bench/http-bare-server.ts): the backend's HTTP stack alone, a constant JSON-RPC answer. */
export async function startBare(backend: 'uws' | 'node'): Promise<Server> {
  const child = spawnTracked(process.execPath, [BARE, backend], { stdio: ['ignore', 'pipe', 'pipe'] });
  const name = `bare ${backend === 'uws' ? 'uWS' : 'node:http'}`;
  const stderr = tail(child);
  const port = await portFromStdout(child, name, /listening (\d+)/, stderr);
  const s: Server = { name, child, port, rpcPath: '/', kind: 'bare' };
  await waitForRpc(s, 30_000, stderr);
  return s;
}

/**
 * Our node on the dev chain (funded Hardhat accounts), rate limits off, concurrency cap raised;
 * extraArgs adds flags (e.g. `--genesis <file>`, which takes precedence over the dev preset).
 * BENCH_NODE_ARGS adds node flags (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`).
 */
export async function startNative(
  backend: 'uws' | 'node',
  dataDir: string,
  extraArgs: string[] = [],
  main = MAIN,
  name = `native [${backend}]`,
): Promise<Server> {
  const child = spawnTracked(
    process.execPath,
    [
      ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
      main,
      '--dev',
      '--data-dir',
      dataDir,
      '--host',
      '127.0.0.1',
      '--port',
      '0',
      '--http-backend',
      backend,
      '--max-concurrent',
      '100000',
      '--log-level',
      'info',
      ...extraArgs,
    ],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
      // No gRPC on the dev chain's fixed 50051 (benches run several nodes); `--grpc-port 0` in extraArgs wins.
      env: { ...process.env, NATIVE_RATE_LIMIT_GLOBAL: '0', NATIVE_RATE_LIMIT_WRITE: '0', NATIVE_GRPC_PORT: 'off' },
    },
  );
  const stderr = tail(child);
  const port = await portFromStdout(child, name, /"port":(\d+)[^\n]*"msg":"API listening"/, stderr);
  const s: Server = { name, child, port, rpcPath: '/rpc', kind: 'native' };
  await waitForRpc(s, 30_000, stderr);
  return s;
}

/** Ganache in memory, with the Hardhat mnemonic so 0xf39f... is funded there too; extraArgs adds options. */
export async function startGanache(extraArgs: string[] = []): Promise<Server> {
  const port = await freePort();
  const child = spawnTracked(
    process.execPath,
    [
      GANACHE_CLI,
      '--server.host',
      '127.0.0.1',
      '--server.port',
      String(port),
      '--logging.quiet',
      '--wallet.mnemonic',
      DEV_MNEMONIC,
      ...extraArgs,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], cwd: PEERS_DIR },
  );
  const s: Server = { name: `ganache ${GANACHE_VERSION}`, child, port, rpcPath: '/', kind: 'peer' };
  await waitForRpc(s, 60_000, tail(child));
  return s;
}

/**
 * `hardhat node` from a minimal project (or from `project` with its own hardhat `cli`); its per-call log on
 * stdout is discarded.
 */
export async function startHardhat(opts: { project?: string; cli?: string } = {}): Promise<Server> {
  const project = opts.project ?? HARDHAT_PROJECT;
  if (!opts.project) {
    mkdirSync(HARDHAT_PROJECT, { recursive: true });
    const config = join(HARDHAT_PROJECT, 'hardhat.config.cjs');
    if (!existsSync(config)) writeFileSync(config, 'module.exports = { networks: { hardhat: { chainId: 31337 } } };\n');
  }
  const port = await freePort();
  const cli = opts.cli ?? HARDHAT_CLI;
  const child = spawnTracked(process.execPath, [cli, 'node', '--hostname', '127.0.0.1', '--port', String(port)], {
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: project,
    env: { ...process.env, HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true', CI: 'true' },
  });
  const s: Server = { name: `hardhat ${HARDHAT_VERSION}`, child, port, rpcPath: '/', kind: 'peer' };
  await waitForRpc(s, 90_000, tail(child));
  return s;
}

function installedVersion(pkg: string): string | undefined {
  try {
    return JSON.parse(readFileSync(join(PEERS_DIR, 'node_modules', pkg, 'package.json'), 'utf8')).version;
  } catch {
    return undefined;
  }
}

/**
 * Installs ganache and hardhat into bench/.peers when missing (bounded to 3 minutes).
 * Returns undefined when ready, else why not (the bench then skips the peer columns).
 */
export async function ensurePeers(log: (s: string) => void): Promise<string | undefined> {
  if (process.env.BENCH_SKIP_PEERS === '1') return 'peers skipped (BENCH_SKIP_PEERS=1)';
  if (installedVersion('ganache') === GANACHE_VERSION && installedVersion('hardhat') === HARDHAT_VERSION) return undefined;
  log(`installing ganache@${GANACHE_VERSION} and hardhat@${HARDHAT_VERSION} into ${PEERS_DIR} ...`);
  mkdirSync(PEERS_DIR, { recursive: true });
  const args = [
    'install',
    '--prefix',
    PEERS_DIR,
    '--no-save',
    '--no-audit',
    '--no-fund',
    '--no-package-lock',
    `ganache@${GANACHE_VERSION}`,
    `hardhat@${HARDHAT_VERSION}`,
  ];
  const failure = await new Promise<string | undefined>((resolve) => {
    const child = spawnTracked('npm', args, { stdio: ['ignore', 'ignore', 'pipe'], cwd: PEERS_DIR });
    const stderr = tail(child);
    const timer = setTimeout(() => killGroup(child, 'SIGKILL'), 180_000);
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve(`npm could not run: ${e.message}`);
    });
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const lastErr = stderr()
        .split('\n')
        .filter((l) => /ERR|error/i.test(l))
        .slice(-2)
        .join(' ')
        .slice(0, 200);
      resolve(code === 0 ? undefined : `npm install failed (${code ?? signal})${lastErr ? `: ${lastErr}` : ''}`);
    });
  });
  if (failure) return `${failure}; peer columns skipped (no network?)`;
  if (installedVersion('ganache') !== GANACHE_VERSION || installedVersion('hardhat') !== HARDHAT_VERSION) {
    return 'peers not found after npm install; peer columns skipped';
  }
  return undefined;
}
