/**
 * Storage benchmarks (docs/storage.md): reads of past state, the history's cost per block, the block
 * commit, and a node's memory and restart time by state size. `node dist/bench/storage.js [history|commit [rounds]|
 * restart N[,N]|checkpoint N[,N]]` (checkpoint: bench/trie-checkpoint.ts) prints table rows for bench/RESULTS.md.
 * Times are wall clock and, where the shared machine's
 * load makes wall time meaningless, CPU time of this process too.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Chain } from '../ts/chain/chain.js';
import { StateHistory, addIndexOps } from '../ts/chain/state-history.js';
import { randomKeyPair, keyPairFromPrivate } from '../ts/ledger/keys.js';
import { BASE_PER_COIN } from '../ts/modules/kit/units.js';
import { accountKey, encodeAccount } from '../ts/state/accounts.js';
import type { KeyStr, StateUndo } from '../ts/state/state-store.js';
import { type KvBatch, openRocksStore } from '../ts/storage/index.js';
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

/** A write batch that only counts what is put in it (the bytes and keys of the history index's batches). */
function countingBatch(): KvBatch & { bytes: number } {
  let size = 0;
  return {
    bytes: 0,
    put(key, value) {
      this.bytes += key.length + value.length;
      size++;
    },
    del(key) {
      this.bytes += key.length;
      size++;
    },
    get size() {
      return size;
    },
    write: async () => undefined,
  };
}

/**
 * Reads at a height `back` blocks below the head of a history of `blocks` blocks over `accounts` accounts,
 * `perBlock` accounts changed per block, written as the chain writes them (the change set with the blocks,
 * the index by the history's indexer). The head state is a Map (as the in-memory state); the read is
 * StateHistory.valueAt, what a view's get does. Then `behind` more blocks are committed with the indexer
 * paused: the same read, and a read inside the not-yet-indexed blocks.
 */
export async function benchHistoryReads(
  accounts = 1_000_000,
  blocks = 110_000,
  perBlock = 20,
  back = 100_000,
  behind = 64,
): Promise<Row[]> {
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
    const commitBlocks = async (from: number, to: number) => {
      const ops = [];
      const undos: StateUndo[] = [];
      for (let h = from; h <= to; h++) {
        const undo: StateUndo = new Map();
        for (let j = 0; j < perBlock; j++) {
          const k = keys[rand(accounts)];
          if (!undo.has(k)) undo.set(k, head.get(k));
          head.set(k, encodeAccount({ nonce: BigInt(h), balance: BigInt(h) * 1000n }));
        }
        ops.push(...history.commitOps(h, undo));
        undos.push(undo);
      }
      await db.write(ops);
      undos.forEach((u, i) => history.committed(from + i, u));
    };
    const t0 = performance.now();
    for (let h = 1; h <= blocks; h += 1000) {
      await commitBlocks(h, Math.min(blocks, h + 999));
      await history.flush();
    }
    const buildS = (performance.now() - t0) / 1000;
    const readAt = (at: number, top: number) => {
      const times: number[] = [];
      const headTimes: number[] = [];
      for (let i = 0; i < 20_000; i++) {
        const k = keys[rand(accounts)];
        const s = performance.now();
        history.valueAt(k, at, top, head);
        times.push(performance.now() - s);
        const s2 = performance.now();
        head.get(k);
        headTimes.push(performance.now() - s2);
      }
      return { times, headTimes };
    };
    const indexed = readAt(blocks - back, blocks);
    // The indexer held back: `behind` more blocks whose change sets are only in the pending table.
    const resume = await history.pauseIndexing();
    await commitBlocks(blocks + 1, blocks + behind);
    const top = blocks + behind;
    const deep = readAt(top - back, top);
    const recent = readAt(top - behind / 2, top);
    resume();
    const us = (ms: number) => `${(ms * 1000).toFixed(1)} µs`;
    const goal = (times: number[]) => `goal p50 <= 200 µs: ${median(times) <= 0.2 ? 'met' : 'MISSED'}`;
    return [
      {
        name: `history read: a key's value ${back.toLocaleString()} blocks below the head (${accounts.toLocaleString()} accounts, ${blocks.toLocaleString()} blocks of ${perBlock} changed accounts)`,
        value: `p50 ${us(median(indexed.times))}, p99 ${us(pct(indexed.times, 0.99))}`,
        note: `${goal(indexed.times)}; head read from memory p50 ${us(median(indexed.headTimes))}; history of ${((blocks * perBlock) / 1e6).toFixed(1)}M changes written and indexed in ${buildS.toFixed(0)} s`,
      },
      {
        name: `... the same read with the indexer ${behind} blocks behind the head`,
        value: `p50 ${us(median(deep.times))}, p99 ${us(pct(deep.times, 0.99))}`,
        note: `${goal(deep.times)}; the index up to its marker, then the ${behind} pending change sets in memory`,
      },
      {
        name: `... a read ${behind / 2} blocks below the head, inside the not-yet-indexed blocks`,
        value: `p50 ${us(median(recent.times))}, p99 ${us(pct(recent.times, 0.99))}`,
        note: 'pending change sets only (no disk read unless the key is older)',
      },
    ];
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A 10,000-transfer block (2,000 senders) produced and committed, with the history written and without it
 * (the same commit with the change set left out and no indexing), alternating, after a warm-up round: commit
 * time and CPU, the CPU of the history index built after the commit, the ops and bytes the history adds per block.
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
  const indexCpu: number[] = [];
  let commitBytes = 0;
  let commitOps = 0;
  const index = countingBatch();
  // Round 0 warms the JIT up and is not counted; the order of the two modes alternates between rounds.
  for (let r = 0; r <= rounds; r++) {
    for (const mode of r % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
      const dir = mkdtempSync(join(tmpdir(), 'native-bench-commit-'));
      const db = await openRocksStore(join(dir, 'db'));
      try {
        const chain = new Chain(params, db, 1000);
        await chain.open();
        chain.now = () => ts;
        const history = chain.blocks.history;
        if (mode === 'without') {
          history.commitOps = () => [];
          history.committed = () => undefined;
        } else {
          const real = history.commitOps.bind(history);
          history.commitOps = (h, undo) => {
            const ops = real(h, undo);
            commitOps = ops.length;
            commitBytes = ops.reduce((n, o) => n + o.key.length + (o.value?.length ?? 0), 0);
            if (index.size === 0) addIndexOps(index, h, undo);
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
        const c1 = cpuMs();
        if (r > 0) {
          runs[mode].commitCpu.push(c1 - c0);
          runs[mode].total.push(t2 - t0);
          runs[mode].commit.push(t2 - t1);
          runs[mode].exec.push(t1 - t0);
        }
        if (mode === 'with') {
          // The indexer's step for this block (it would run on the next turn of the event loop), timed apart.
          await history.flush();
          if (r > 0) indexCpu.push(cpuMs() - c1);
          if (history.indexed !== chain.height) throw new Error('the history index did not catch up');
        }
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
  // Each round's two commits ran back to back: their difference cancels most of the load's slow swings.
  const paired = median(w.commitCpu.map((c, i) => c - wo.commitCpu[i]));
  const withIndex = (median(w.commitCpu) + median(indexCpu)) / median(wo.commitCpu) - 1;
  return [
    {
      name: `block production incl. atomic RocksDB commit: ${n.toLocaleString()} native transfers (history's change set written)`,
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
      note: `goal <= 10%: ${added <= 0.1 ? 'met' : 'MISSED'}; median of the rounds' paired differences ${paired.toFixed(1)} ms (${((paired / median(wo.commitCpu)) * 100).toFixed(1)}%); wall-clock commit medians ${median(w.commit).toFixed(0)} vs ${median(wo.commit).toFixed(0)} ms`,
    },
    {
      name: 'history: index built after the commit (background step, CPU per block, median)',
      value: `${median(indexCpu).toFixed(1)} ms`,
      note: `off the commit path, on the main thread after it; commit + index against the commit without history: +${(withIndex * 100).toFixed(1)}%`,
    },
    {
      name: 'history: extra data per block (10,000 transfers, 2,000 senders)',
      value: `${(commitBytes / 1024).toFixed(0)} KiB in the commit (${commitOps} op)`,
      note: `the change set with previous values; the indexer then writes ${index.size.toLocaleString()} ops, ${(index.bytes / 1024).toFixed(0)} KiB (an index entry per changed key with its previous value, the key list, the change set deleted)`,
    },
  ];
}

/** The trie checkpoint of a restart bench's data dir (what the node keeps in its data dir). */
const checkpointOf = (dir: string) => ({ path: join(dir, 'state-trie.ckpt'), everyBlocks: 0 });

/**
 * Child process: open the chain in `dir` (the trie from its checkpoint, or with `rebuild` streamed from `S`;
 * checked against the head root either way), report time, RSS and how the trie came back.
 */
async function openAndReport(dir: string, how: string): Promise<void> {
  // An existing store needs no allocation (genesis is on disk): the child holds only what a restarted node holds.
  const params = restartParams(0);
  const t0 = performance.now();
  const db = await openRocksStore(join(dir, 'db'));
  const chain = new Chain(params, db, 1000, how === 'rebuild' ? {} : { trieCheckpoint: checkpointOf(dir) });
  await chain.open();
  const ms = performance.now() - t0;
  global.gc?.();
  const peakRss = process.resourceUsage().maxRSS * 1024;
  const from = chain.trieStart?.from;
  process.stdout.write(
    `${JSON.stringify({ ms, rss: process.memoryUsage().rss, peakRss, height: chain.height, size: chain.state.size, from })}\n`,
  );
  await db.close();
}

/** Run openAndReport in a fresh process. */
async function openInChild(dir: string, how: 'checkpoint' | 'rebuild') {
  const child = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), 'open', dir, how], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  await new Promise((r) => child.on('exit', r));
  return JSON.parse(out.trim()) as { ms: number; rss: number; peakRss: number; size: number; from: string };
}

/**
 * `accounts` allocations of 1000 coins to address(0), address(1), ..., made as they are iterated: a Map of
 * 10M entries would hold ~1.5 GiB in this process. Only what the genesis writer reads is answered.
 */
class GeneratedAlloc extends Map<string, bigint> {
  constructor(private readonly accounts: number) {
    super();
  }

  override get size(): number {
    return this.accounts;
  }

  override *entries(): MapIterator<[string, bigint]> {
    for (let i = 0; i < this.accounts; i++) yield [address(i), 1000n * BASE_PER_COIN];
  }

  override *keys(): MapIterator<string> {
    for (let i = 0; i < this.accounts; i++) yield address(i);
  }

  override [Symbol.iterator](): MapIterator<[string, bigint]> {
    return this.entries();
  }
}

function restartParams(accounts: number) {
  const validator = keyPairFromPrivate('11'.repeat(32));
  const p = benchChainParams(validator, []);
  p.alloc = new GeneratedAlloc(accounts);
  return p;
}

/**
 * A data dir whose state holds `accounts` accounts (the genesis allocation, streamed), closed as a node
 * stops (a trie checkpoint written), then fresh processes opening it: from the checkpoint, and rebuilding the
 * trie from `S` (what a node does without a usable checkpoint).
 */
export async function benchRestart(accounts: number): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-restart-'));
  try {
    const t0 = performance.now();
    let genesisS = 0;
    let checkpointS = 0;
    {
      const db = await openRocksStore(join(dir, 'db'));
      const chain = new Chain(restartParams(accounts), db, 1000, { trieCheckpoint: checkpointOf(dir) });
      await chain.open();
      genesisS = (performance.now() - t0) / 1000;
      const t1 = performance.now();
      await chain.checkpointNow();
      checkpointS = (performance.now() - t1) / 1000;
      await db.close();
    }
    const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;
    const size = `database ${(dirBytes(join(dir, 'db')) / 2 ** 20).toFixed(0)} MiB`;
    const rows: Row[] = [];
    for (const how of ['checkpoint', 'rebuild'] as const) {
      const res = await openInChild(dir, how);
      if (res.size < accounts) throw new Error(`the reopened state holds ${res.size} keys, fewer than ${accounts} accounts`);
      rows.push({
        name: `node state of ${accounts.toLocaleString()} accounts: restart (open the store, ${how === 'rebuild' ? 'rebuild the trie from S' : 'load the trie checkpoint'}, check the head's root)`,
        value: `${(res.ms / 1000).toFixed(1)} s, RSS ${gib(res.rss)}`,
        note: `trie from: ${res.from}; values on disk (cache empty after start); peak RSS ${gib(res.peakRss)}; ${res.size.toLocaleString()} keys; ${size}; genesis written in ${genesisS.toFixed(0)} s, checkpoint in ${checkpointS.toFixed(1)} s`,
      });
    }
    return rows;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [what = 'all', arg] = process.argv.slice(2);
  if (what === 'open') return openAndReport(arg as string, process.argv[4] ?? 'checkpoint');
  const rows: Row[] = [];
  if (what === 'history' || what === 'all') rows.push(...(await benchHistoryReads()));
  if (what === 'commit' || what === 'all') rows.push(...(await benchCommit(what === 'commit' && arg ? Number(arg) : undefined)));
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
