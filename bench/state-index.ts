/**
 * The state index's memory and start time by state size (issue 10, "State indexes"): the disk-backed index
 * (services/state-index.ts) opened on current tables, rebuilt from the state, and the in-memory index it
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
import { BASE_PER_COIN } from '../ts/ledger/units.js';
import { openStateIndex, stopStateIndex } from '../ts/services/index.js';
import { MARKER_KEY } from '../ts/services/state-index-store.js';
import { addressFromAccountKey, decodeAccount } from '../ts/state/accounts.js';
import { openRocksStore } from '../ts/storage/index.js';
import { benchChainParams } from './fixtures.js';
import type { Row } from './ledger.js';

const BTree = sortedBtree.default;
const U256_MAX = (1n << 256n) - 1n;

/** The pre-issue-10 index of native balances: what it held per account (Map, B+ tree, Set of keys). */
function inMemoryIndex(chain: Chain): { size: number; top: string[] } {
  const byAddress = new Map<string, bigint>();
  const order = new BTree<string, bigint>();
  const accountKeys = new Set<string>();
  for (const [k, v] of chain.state.entries()) {
    const address = addressFromAccountKey(k);
    if (!address) continue;
    accountKeys.add(k);
    const balance = decodeAccount(v).balance;
    if (balance === 0n) continue;
    byAddress.set(address, balance);
    order.set((U256_MAX - balance).toString(16).padStart(64, '0') + address, balance);
  }
  const top: string[] = [];
  for (const [k] of order.entries()) {
    if (top.length >= 10) break;
    top.push(k.slice(64));
  }
  (globalThis as { keep?: unknown }).keep = [byAddress, order, accountKeys];
  return { size: byAddress.size, top };
}

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

/** Child process: open the chain, then time the index's start and measure what it adds to heap and RSS. */
async function child(dir: string, mode: Mode): Promise<void> {
  const db = await openRocksStore(join(dir, 'db'));
  const chain = new Chain(params(0), db, 1000);
  await chain.open();
  if (mode === 'rebuild') await db.write([{ type: 'del', key: MARKER_KEY }]);
  global.gc?.();
  const before = process.memoryUsage();
  const t0 = performance.now();
  let top: string[];
  if (mode === 'before') top = inMemoryIndex(chain).top;
  else {
    const idx = await openStateIndex(chain);
    await idx.ready(3_600_000);
    top = idx.accounts.top(10).map((h) => h.address);
  }
  const ms = performance.now() - t0;
  global.gc?.();
  const after = process.memoryUsage();
  process.stdout.write(
    `${JSON.stringify({ ms, heap: after.heapUsed - before.heapUsed, rss: after.rss - before.rss, rssTotal: after.rss, top: top[0] })}\n`,
  );
  await stopStateIndex(chain);
  await db.close();
}

async function run(dir: string, mode: Mode): Promise<{ ms: number; heap: number; rss: number; rssTotal: number; top: string }> {
  const p = spawn(process.execPath, ['--expose-gc', fileURLToPath(import.meta.url), 'child', dir, mode], {
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
    const rebuilt = await run(dir, 'rebuild');
    const current = await run(dir, 'current');
    const old = await run(dir, 'before');
    if (rebuilt.top !== old.top || current.top !== old.top) throw new Error('the indexes disagree on the richest account');
    const n = accounts.toLocaleString();
    const row = (what: string, r: typeof old, note: string): Row => ({
      name: `state index, ${n} accounts: ${what}`,
      value: `${(r.ms / 1000).toFixed(2)} s, heap +${mib(r.heap)}, RSS +${mib(r.rss)}`,
      note: `${note}; process RSS ${mib(r.rssTotal)} (the state itself is still in memory)`,
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
  const [what, a, b] = process.argv.slice(2);
  if (what === 'child') return child(a as string, b as Mode);
  for (const r of await benchStateIndex(Number(what ?? 1_000_000)))
    process.stdout.write(`| ${r.name} | ${r.value} | ${r.note ?? ''} |\n`);
}

if (process.argv[1]?.endsWith('state-index.js')) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
