/**
 * Storage benchmarks (docs/storage.md): reads of past state, the history's cost per block, the block
 * commit, and a node's memory and restart time by state size. `node dist/bench/storage.js [history|commit|
 * restart|checkpoint] ...` (checkpoint: bench/trie-checkpoint.ts) prints table rows for bench/RESULTS.md. Times are wall clock and, where the shared machine's
 * load makes wall time meaningless, CPU time of this process too.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Chain } from '../ts/chain/chain.js';
import { StateHistory } from '../ts/chain/state-history.js';
import { randomKeyPair, keyPairFromPrivate } from '../ts/ledger/keys.js';
import { BASE_PER_COIN } from '../ts/ledger/units.js';
import { accountKey, encodeAccount } from '../ts/state/accounts.js';
import type { KeyStr, StateUndo } from '../ts/state/state-store.js';
import { openRocksStore } from '../ts/storage/index.js';
import { benchChainParams, senderKeys, signedTransfers } from './fixtures.js';
import { admitForBench, type Row } from './ledger.js';
import { benchCheckpoint } from './trie-checkpoint.js';

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((s.length - 1) * p))];
};
const median = (xs: number[]): number => pct(xs, 0.5);
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Deterministic 20-byte addresses (no key derivation: a million of them in a second). */
function address(i: number): string {
  return `0x${(i + 1).toString(16).padStart(40, '0')}`;
}

/** Total bytes of the files in a directory (RocksDB's SSTs and logs). */
function dirBytes(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir)) n += statSync(join(dir, f)).size;
  return n;
}

/**
 * Reads at a height `back` blocks below the head of a history of `blocks` blocks over `accounts` accounts,
 * `perBlock` accounts changed per block (the change sets and index written as the chain writes them). The
 * head state is a Map (as the in-memory state); the read is StateHistory.valueAt, what a view's get does.
 */
export async function benchHistoryReads(accounts = 1_000_000, blocks = 110_000, perBlock = 20, back = 100_000): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-history-'));
  const db = await openRocksStore(join(dir, 'db'));
  try {
    const history = new StateHistory(db);
    await history.open(-1);
    const keys: KeyStr[] = Array.from({ length: accounts }, (_, i) => accountKey(address(i)));
    const head = new Map<KeyStr, Buffer>();
    let x = 12345;
    const rand = (n: number) => {
      x = (x * 1103515245 + 12345) >>> 0;
      return x % n;
    };
    const t0 = performance.now();
    let ops = [];
    for (let h = 1; h <= blocks; h++) {
      const undo: StateUndo = new Map();
      for (let j = 0; j < perBlock; j++) {
        const k = keys[rand(accounts)];
        undo.set(k, head.get(k));
        head.set(k, encodeAccount({ nonce: BigInt(h), balance: BigInt(h) * 1000n }));
      }
      ops.push(...history.commitOps(h, undo));
      if (h % 1000 === 0) {
        await db.write(ops);
        ops = [];
      }
    }
    await db.write(ops);
    const buildS = (performance.now() - t0) / 1000;
    const at = blocks - back;
    const times: number[] = [];
    const headTimes: number[] = [];
    for (let i = 0; i < 20_000; i++) {
      const k = keys[rand(accounts)];
      const s = performance.now();
      history.valueAt(k, at, blocks, head);
      times.push(performance.now() - s);
      const s2 = performance.now();
      head.get(k);
      headTimes.push(performance.now() - s2);
    }
    const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
    return [
      {
        name: `history read: a key's value ${back.toLocaleString()} blocks below the head (${accounts.toLocaleString()} accounts, ${blocks.toLocaleString()} blocks of ${perBlock} changed accounts)`,
        value: `p50 ${us(median(times))}, p99 ${us(pct(times, 0.99))}`,
        note: `goal p50 <= 200 µs: ${median(times) <= 0.2 ? 'met' : 'MISSED'}; head read from memory p50 ${us(median(headTimes))}; history of ${((blocks * perBlock) / 1e6).toFixed(1)}M changes written in ${buildS.toFixed(0)} s`,
      },
    ];
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A 10,000-transfer block (2,000 senders) produced and committed, with the history written and without it
 * (the same commit with the change-set ops left out), alternating rounds: commit time and CPU, the ops and
 * bytes the history adds per block.
 */
export async function benchCommit(rounds = 5): Promise<Row[]> {
  const keys = senderKeys(2000);
  const txs = signedTransfers(keys, 5, 7120);
  const validator = randomKeyPair();
  const params = benchChainParams(validator, keys);
  const ts = 1_700_000_001;
  const runs: Record<'with' | 'without', { total: number[]; commit: number[]; commitCpu: number[]; exec: number[] }> = {
    with: { total: [], commit: [], commitCpu: [], exec: [] },
    without: { total: [], commit: [], commitCpu: [], exec: [] },
  };
  let historyBytes = 0;
  let historyOps = 0;
  for (let r = 0; r < rounds; r++) {
    for (const mode of ['with', 'without'] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'native-bench-commit-'));
      const db = await openRocksStore(join(dir, 'db'));
      try {
        const chain = new Chain(params, db, 1000);
        await chain.open();
        chain.now = () => ts;
        if (mode === 'without') chain.blocks.history.commitOps = () => [];
        else {
          const real = chain.blocks.history.commitOps.bind(chain.blocks.history);
          chain.blocks.history.commitOps = (h, undo) => {
            const ops = real(h, undo);
            historyOps = ops.length;
            historyBytes = ops.reduce((n, o) => n + o.key.length + (o.value?.length ?? 0), 0);
            return ops;
          };
        }
        admitForBench(chain, txs, ts);
        const t0 = performance.now();
        const p = await chain.propose(txs, validator, ts);
        const t1 = performance.now();
        const c0 = cpuMs();
        await chain.commit(p);
        const t2 = performance.now();
        runs[mode].commitCpu.push(cpuMs() - c0);
        runs[mode].total.push(t2 - t0);
        runs[mode].commit.push(t2 - t1);
        runs[mode].exec.push(t1 - t0);
      } finally {
        await db.close();
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
  const n = txs.length;
  const tps = (ms: number) => `${Math.round(n / (ms / 1000)).toLocaleString()} tx/s`;
  const w = runs.with;
  const wo = runs.without;
  const added = median(w.commitCpu) / median(wo.commitCpu) - 1;
  return [
    {
      name: `block production incl. atomic RocksDB commit: ${n.toLocaleString()} native transfers (history written)`,
      value: tps(median(w.total)),
      note: `median of ${rounds}: produce ${median(w.exec).toFixed(0)} ms, commit ${median(w.commit).toFixed(0)} ms (CPU ${median(w.commitCpu).toFixed(0)} ms); goal >= 50,000 tx/s: ${n / (median(w.total) / 1000) >= 50_000 ? 'met' : 'MISSED'}`,
    },
    {
      name: '... the same commit without the history ops',
      value: tps(median(wo.total)),
      note: `commit ${median(wo.commit).toFixed(0)} ms (CPU ${median(wo.commitCpu).toFixed(0)} ms)`,
    },
    {
      name: 'history: commit cost added (CPU time of the commit, medians)',
      value: `${(added * 100).toFixed(1)}%`,
      note: `goal <= 10%: ${added <= 0.1 ? 'met' : 'MISSED'}; wall-clock commit medians ${median(w.commit).toFixed(0)} vs ${median(wo.commit).toFixed(0)} ms`,
    },
    {
      name: 'history: extra data per block (10,000 transfers, 2,000 senders)',
      value: `${(historyBytes / 1024).toFixed(0)} KiB before compression`,
      note: `${historyOps.toLocaleString()} ops (an index entry per changed key holding its previous value, one change-set value listing the keys)`,
    },
  ];
}

/** Child process: open the chain in `dir` (state rebuilt and checked against the head root), report time and RSS. */
async function openAndReport(dir: string): Promise<void> {
  // An existing store needs no allocation (genesis is on disk): the child holds only what a restarted node holds.
  const params = restartParams(0);
  const t0 = performance.now();
  const db = await openRocksStore(join(dir, 'db'));
  const chain = new Chain(params, db, 1000);
  await chain.open();
  const ms = performance.now() - t0;
  global.gc?.();
  process.stdout.write(
    `${JSON.stringify({ ms, rss: process.memoryUsage().rss, height: chain.height, size: chain.state.size })}\n`,
  );
  await db.close();
}

function restartParams(accounts: number) {
  const validator = keyPairFromPrivate('11'.repeat(32));
  const p = benchChainParams(validator, []);
  p.alloc = new Map(Array.from({ length: accounts }, (_, i) => [address(i), 1000n * BASE_PER_COIN]));
  return p;
}

/** A data dir whose state holds `accounts` accounts (the genesis allocation), then a fresh process opening it. */
export async function benchRestart(accounts: number): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-restart-'));
  try {
    const t0 = performance.now();
    const db = await openRocksStore(join(dir, 'db'));
    const chain = new Chain(restartParams(accounts), db, 1000);
    await chain.open();
    const genesisS = (performance.now() - t0) / 1000;
    await db.close();
    const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), 'open', dir], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    await new Promise((r) => child.on('exit', r));
    const res = JSON.parse(out.trim()) as { ms: number; rss: number };
    return [
      {
        name: `node state of ${accounts.toLocaleString()} accounts: restart (open the store, rebuild the state, check the head's root)`,
        value: `${(res.ms / 1000).toFixed(1)} s, RSS ${(res.rss / 2 ** 30).toFixed(2)} GiB`,
        note: `state held in memory; database ${(dirBytes(join(dir, 'db')) / 2 ** 20).toFixed(0)} MiB; genesis written in ${genesisS.toFixed(0)} s`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [what = 'all', arg] = process.argv.slice(2);
  if (what === 'open') return openAndReport(arg as string);
  const rows: Row[] = [];
  if (what === 'history' || what === 'all') rows.push(...(await benchHistoryReads()));
  if (what === 'commit' || what === 'all') rows.push(...(await benchCommit()));
  if (what === 'checkpoint') {
    for (const n of (arg ?? '1000000').split(',').map(Number)) rows.push(...(await benchCheckpoint(n)));
  }
  if (what === 'restart' || what === 'all') {
    for (const n of (arg ?? '1000000').split(',').map(Number)) rows.push(...(await benchRestart(n)));
  }
  for (const r of rows) process.stdout.write(`| ${r.name} | ${r.value} | ${r.note ?? ''} |\n`);
}

if (process.argv[1]?.endsWith('storage.js')) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
