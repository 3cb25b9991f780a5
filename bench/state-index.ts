/**
 * The state index's memory and start time by state size (issue 10, "State indexes"): the disk-backed index
 * (indexes/state-index.ts) opened on current tables, rebuilt from the state, and the in-memory index it
 * replaced (a Map and a B+ tree entry per account and a Set of every account key, built by one pass over the
 * state; kept below as the baseline), each in a fresh process over the same data dir.
 * `node dist/bench/state-index.js [accounts]` prints table rows for bench/RESULTS.md.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import sortedBtree from 'sorted-btree';
import { Chain } from '../ts/chain/chain.js';
import { keyPairFromPrivate } from '../ts/ledger/keys.js';
import { BASE_PER_COIN } from '../ts/modules/kit/units.js';
import { openStateIndex, stopStateIndex } from '../ts/indexes/index.js';
import { foldChanges } from '../ts/indexes/state-index-fold.js';
import { decodeMarker, IndexTables, type IndexTotals, MARKER_KEY } from '../ts/indexes/state-index-store.js';
import { accountKey, addressFromAccountKey, decodeAccount, encodeAccount } from '../ts/state/accounts.js';
import { openRocksStore } from '../ts/storage/index.js';
import { benchChainParams } from './fixtures.js';
import type { Row } from './ledger.js';

const BTree = sortedBtree.default;
const U256_MAX = (1n << 256n) - 1n;

/** The pre-issue-10 index of native balances: what it held per account (Map, B+ tree, Set of keys). */
class InMemoryIndex {
  private readonly byAddress = new Map<string, bigint>();
  private readonly order = new BTree<string, bigint>();
  private readonly accountKeys = new Set<string>();

  constructor(chain: Chain) {
    for (const [k, v] of chain.state.entries()) this.fold(k, v);
  }

  fold(k: string, v: Buffer | undefined): void {
    const address = addressFromAccountKey(k);
    if (!address) return;
    if (v) this.accountKeys.add(k);
    else this.accountKeys.delete(k);
    const before = this.byAddress.get(address);
    if (before !== undefined) this.order.delete(rankKey(before, address));
    const balance = v ? decodeAccount(v).balance : 0n;
    if (balance > 0n) {
      this.byAddress.set(address, balance);
      this.order.set(rankKey(balance, address), balance);
    } else this.byAddress.delete(address);
  }

  top(n: number): string[] {
    const out: string[] = [];
    for (const [k] of this.order.entries()) {
      if (out.length >= n) break;
      out.push(k.slice(64));
    }
    return out;
  }
}

const rankKey = (balance: bigint, address: string): string => (U256_MAX - balance).toString(16).padStart(64, '0') + address;

const address = (i: number): string => `0x${(i + 1).toString(16).padStart(40, '0')}`;

function params(accounts: number) {
  const p = benchChainParams(keyPairFromPrivate('11'.repeat(32)), []);
  // Distinct balances: the order is not the insertion order.
  p.alloc = new Map(
    Array.from({ length: accounts }, (_, i) => [address(i), 1000n * BASE_PER_COIN + BigInt((i * 7919) % accounts)]),
  );
  return p;
}

type Mode = 'current' | 'rebuild' | 'before';

/** Accounts changed per simulated block: a 10,000-transfer block from 2,000 senders. */
const FOLD_KEYS = 12_000;
const FOLD_ROUNDS = 7;

/** New balances for FOLD_KEYS existing accounts (deterministic per round). */
function blockChanges(accounts: number, round: number): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (let i = 0; out.size < FOLD_KEYS; i++) {
    const n = (i * 104_729 + round * 7_919) % accounts;
    out.set(accountKey(address(n)), encodeAccount({ nonce: BigInt(round + 1), balance: BigInt(n * 31 + round) }));
  }
  return out;
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Child process: open the chain, time the index's start, what it adds to heap and RSS, and a block's fold. */
async function child(dir: string, mode: Mode, accounts: number): Promise<void> {
  const db = await openRocksStore(join(dir, 'db'));
  const chain = new Chain(params(0), db, 1000);
  await chain.open();
  if (mode === 'rebuild') await db.write([{ type: 'del', key: MARKER_KEY }]);
  global.gc?.();
  const before = process.memoryUsage();
  const t0 = performance.now();
  const c0 = cpuMs();
  let top: string[];
  let fold: (values: Map<string, Buffer>) => Promise<void>;
  if (mode === 'before') {
    const idx = new InMemoryIndex(chain);
    top = idx.top(10);
    fold = async (values) => {
      for (const [k, v] of values) idx.fold(k, v);
    };
  } else {
    const idx = await openStateIndex(chain);
    await idx.ready(3_600_000);
    top = idx.accounts.top(10).map((h) => h.address);
    const tables = new IndexTables(db);
    const totals = decodeMarker(tables.get(MARKER_KEY))?.totals as IndexTotals;
    fold = async (values) => {
      const batch = db.batch();
      foldChanges(tables, totals, values, batch);
      await batch.write();
    };
  }
  const ms = performance.now() - t0;
  const cpu = cpuMs() - c0;
  global.gc?.();
  const after = process.memoryUsage();
  const foldCpu: number[] = [];
  // The folds change the tables (not the state): only after the last run that reads them as the state says.
  for (let r = 0; r < (mode === 'rebuild' ? 0 : FOLD_ROUNDS); r++) {
    const values = blockChanges(accounts, r);
    const c0 = cpuMs();
    await fold(values);
    foldCpu.push(cpuMs() - c0);
  }
  foldCpu.sort((a, b) => a - b);
  process.stdout.write(
    `${JSON.stringify({ ms, cpu, heap: after.heapUsed - before.heapUsed, rss: after.rss - before.rss, rssTotal: after.rss, top: top[0], foldMs: foldCpu.length > 0 ? foldCpu[FOLD_ROUNDS >> 1] : null })}\n`,
  );
  await stopStateIndex(chain);
  await db.close();
}

interface ChildResult {
  ms: number;
  cpu: number;
  heap: number;
  rss: number;
  rssTotal: number;
  top: string;
  foldMs: number | null;
}

async function run(dir: string, mode: Mode, accounts: number): Promise<ChildResult> {
  const p = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), 'child', dir, mode, String(accounts)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  p.stdout.on('data', (d) => (out += d));
  const code = await new Promise((r) => p.on('exit', r));
  if (code !== 0) throw new Error(`child ${mode} exited with ${code}`);
  return JSON.parse(out.trim());
}

const mib = (b: number): string => `${(b / 2 ** 20).toFixed(0)} MiB`;

export async function benchStateIndex(accounts: number): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-state-index-'));
  try {
    const db = await openRocksStore(join(dir, 'db'));
    const chain = new Chain(params(accounts), db, 1000);
    await chain.open();
    await db.close();
    const rebuilt = await run(dir, 'rebuild', accounts);
    const current = await run(dir, 'current', accounts);
    const old = await run(dir, 'before', accounts);
    if (rebuilt.top !== old.top || current.top !== old.top)
      throw new Error(`the indexes disagree on the richest account: ${rebuilt.top} ${current.top} ${old.top}`);
    const n = accounts.toLocaleString();
    const row = (what: string, r: ChildResult, note: string): Row => ({
      name: `state index, ${n} accounts: ${what}`,
      value: `${(r.ms / 1000).toFixed(2)} s (CPU ${(r.cpu / 1000).toFixed(2)} s), heap +${mib(r.heap)}, RSS +${mib(r.rss)}`,
      note: [
        note,
        `process RSS ${mib(r.rssTotal)} (the state itself is still in memory)`,
        r.foldMs === null
          ? ''
          : `fold of a block's ${FOLD_KEYS.toLocaleString()} changed accounts ${r.foldMs.toFixed(1)} ms CPU (median of ${FOLD_ROUNDS})`,
      ]
        .filter(Boolean)
        .join('; '),
    });
    return [
      row('before (in-memory, built from the state)', old, 'Map + B+ tree entry per funded account, Set of account keys'),
      row('after, tables current (restart)', current, 'marker at the head: nothing read but the marker'),
      row('after, rebuilt from the state', rebuilt, 'S account namespace streamed in chunks of 10,000 into RocksDB'),
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const [what, a, b, c] = process.argv.slice(2);
  if (what === 'child') return child(a as string, b as Mode, Number(c));
  for (const r of await benchStateIndex(Number(what ?? 1_000_000)))
    process.stdout.write(`| ${r.name} | ${r.value} | ${r.note ?? ''} |\n`);
}

if (process.argv[1]?.endsWith('state-index.js')) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
