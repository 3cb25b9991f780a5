/**
 * A 4-validator devnet on this machine (real processes, libp2p on 127.0.0.1, BFT from height 1):
 * block interval at rest, and the sync speed of a full node that starts late. Run alone:
 * `npm run build && node dist/bench/network.js` (prints Markdown rows for bench/RESULTS.md).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type TestnetNode, generateTestnet } from '../ts/node/testnet.js';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

function start(n: TestnetNode): ChildProcess {
  const argv = n.start.split(' ');
  const p = spawn(process.execPath, argv.slice(1), { cwd: REPO, stdio: ['ignore', 'ignore', 'inherit'] });
  p.once('exit', (code, signal) => {
    if (signal !== 'SIGKILL') process.stderr.write(`${n.name} exited early (${code ?? signal})\n`);
  });
  return p;
}

async function height(url: string): Promise<number> {
  try {
    const r = await fetch(`${url}/native_status`, { signal: AbortSignal.timeout(2000) });
    return ((await r.json()) as { sync_info: { latest_block_height: number } }).sync_info.latest_block_height;
  } catch {
    return -1;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const portFree = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

/** A base port whose API (P+i) and P2P (P+100+i) ports are free for 5 nodes. */
async function freeBase(): Promise<number> {
  for (;;) {
    // Below Linux's ephemeral range (32768+), where outgoing connections could take a port first.
    const base = 20_000 + Math.floor(Math.random() * 60) * 200;
    const ports = [0, 1, 2, 3, 4].flatMap((i) => [base + i, base + 100 + i]);
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
}

export async function benchNetwork(blocks = 40, syncBlocks = 300): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-net-'));
  const base = await freeBase();
  const procs: ChildProcess[] = [];
  try {
    const nodes = generateTestnet({
      validators: 4,
      fullNodes: 1,
      out: dir,
      basePort: base,
      chainId: 7120,
      dposBftHeight: 1,
      blockTimeMs: 1000,
    });
    for (const n of nodes.slice(0, 4)) procs.push(start(n));
    const url = nodes[0].api_url;
    while ((await height(url)) < 3) await sleep(100);
    // Block interval at rest: the moment each new height is first seen on node 0 (polled every 20 ms).
    const seen: number[] = [];
    let last = await height(url);
    while (seen.length < blocks) {
      const h = await height(url);
      if (h > last) {
        for (let i = last; i < h; i++) seen.push(performance.now());
        last = h;
      }
      await sleep(20);
    }
    const gaps = seen.slice(1).map((t, i) => t - seen[i]);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((a, b) => a + (b - mean) ** 2, 0) / gaps.length);
    const sorted = [...gaps].sort((a, b) => a - b);
    // Sync: a fresh full node from genesis to the head (all justifications verified, blocks re-executed).
    const target = await height(url);
    const want = Math.max(target, syncBlocks);
    while ((await height(url)) < want) await sleep(200);
    const t0 = performance.now();
    procs.push(start(nodes[4]));
    const goal = await height(url);
    while ((await height(nodes[4].api_url)) < goal) await sleep(50);
    const syncS = (performance.now() - t0) / 1000;
    return [
      `| 4-validator devnet (BFT, 1 s block time): block interval at rest | ${(mean / 1000).toFixed(3)} s mean, σ ${(sd / 1000).toFixed(3)} s, p50 ${(sorted[Math.floor(sorted.length / 2)] / 1000).toFixed(3)} s, p95 ${(sorted[Math.floor(sorted.length * 0.95)] / 1000).toFixed(3)} s | ${gaps.length} intervals seen on node0's API |`,
      `| late full node sync (process start to head, empty BFT blocks) | ${Math.round(goal / syncS)} blocks/s | ${goal} blocks in ${syncS.toFixed(1)} s, including process start and peer handshakes |`,
    ];
  } finally {
    for (const p of procs) p.kill('SIGKILL');
    await sleep(500);
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  benchNetwork(Number(process.argv[2] ?? 40), Number(process.argv[3] ?? 300)).then((rows) =>
    process.stdout.write(`${rows.join('\n')}\n`),
  );
}
