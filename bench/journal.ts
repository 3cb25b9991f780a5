/**
 * The transaction journal's two candidate sinks, side by side (docs/storage.md, "Journaled mempool"): an
 * append-only segment file with fdatasync per group, and a RocksDB batch written with sync per group, both
 * behind the same group commit, with `clients` concurrent submitters each waiting for its record to be
 * durable before sending the next (the HTTP lanes of the e2e bench). Then submit -> inclusion end to end
 * with the journal on and off.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeTransaction, signTransaction } from '../ts/ledger/transaction.js';
import { GroupCommit, TxJournal, frame } from '../ts/mempool/tx-journal.js';
import { openRocksStore } from '../ts/storage/index.js';
import { u64be } from '../ts/util/hex.js';
import { senderKeys } from './fixtures.js';
import { type SubmissionStats, benchHttpSubmission } from './http-e2e.js';
import { baselineMain } from './http-load.js';
import type { Row } from './ledger.js';

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];

async function drive(clients: number, perClient: number, append: (i: number) => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let i = 0; i < perClient; i++) await append(c * perClient + i);
    }),
  );
  return (clients * perClient) / ((performance.now() - t0) / 1000);
}

export async function benchJournalSinks(clients = 64, perClient = 200, rounds = 5): Promise<Row[]> {
  const keys = senderKeys(4);
  const txs = Array.from({ length: clients * perClient }, (_, i) =>
    signTransaction(
      { from: keys[i % 4].address, to: keys[(i + 1) % 4].address, amount: 1n, fee: 10_000n, nonce: BigInt(i), chain_id: 7120 },
      keys[i % 4],
    ),
  );
  const fileRates: number[] = [];
  const rocksRates: number[] = [];
  const n = clients * perClient;
  let fileGroups = 0;
  let rocksGroups = 0;
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-journal-'));
  try {
    // Alternating rounds: the shared machine's load moves between them.
    for (let round = 0; round < rounds; round++) {
      const { journal } = await TxJournal.open(join(dir, `file-${round}`));
      fileRates.push(await drive(clients, perClient, (i) => journal.append(txs[i])));
      fileGroups = journal.groups;
      await journal.close();
      const db = await openRocksStore(join(dir, `db-${round}`));
      let seq = 0;
      const rocks = new GroupCommit({
        write: (records) =>
          db.write(
            records.map((r) => ({ type: 'put' as const, key: Buffer.concat([Buffer.from('J'), u64be(seq++)]), value: r })),
            { sync: true },
          ),
      });
      rocksRates.push(await drive(clients, perClient, (i) => rocks.append(frame(encodeTransaction(txs[i])))));
      rocksGroups = rocks.groups;
      await db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const fmt = (xs: number[]) => `${Math.round(median(xs)).toLocaleString()} durable appends/s`;
  const runs = (xs: number[]) => `runs ${xs.map((x) => Math.round(x).toLocaleString()).join(' / ')}`;
  const rows: Row[] = [
    {
      name: `tx journal, append-only segment file (O_DSYNC writev per group): ${n.toLocaleString()} records, ${clients} concurrent submitters`,
      value: fmt(fileRates),
      note: `median of ${rounds}; ${runs(fileRates)}; ${(n / fileGroups).toFixed(1)} records per group`,
    },
    {
      name: `tx journal, RocksDB batch written with sync per group: same load`,
      value: fmt(rocksRates),
      note: `median of ${rounds}; ${runs(rocksRates)}; ${(n / rocksGroups).toFixed(1)} records per group`,
    },
  ];
  return rows;
}

const LANES = 64;

/** One e2e run's blocks and journal counts, from the node's log. */
interface RunDetail {
  stats: SubmissionStats;
  /** Transactions of each non-empty block, in order. */
  blockTxs: number[];
  blockMs: number[];
  journal?: { groups: number; records: number; writeMs: number; maxWriteMs: number; waitMs?: number };
}

function detailCollector(): { onLog: (e: Record<string, unknown>) => void; detail: Omit<RunDetail, 'stats'> } {
  const detail: Omit<RunDetail, 'stats'> = { blockTxs: [], blockMs: [] };
  const onLog = (e: Record<string, unknown>): void => {
    if ((e.msg === 'block produced' || e.msg === 'block ran late') && Number(e.txCount) > 0) {
      detail.blockTxs.push(Number(e.txCount));
      detail.blockMs.push(Math.round(Number(e.totalMs)));
    } else if (e.msg === 'transaction journal closed') detail.journal = e as unknown as RunDetail['journal'];
  };
  return { onLog, detail };
}

interface E2EConfig {
  label: string;
  nodeArgs: string[];
  main?: string;
  runs: RunDetail[];
}

/**
 * Submit -> inclusion with the journal on and off, alternating, `rounds` each (medians); with BENCH_BASELINE
 * (scripts/bench-baseline.sh) the baseline build's node with the journal on runs in the same rounds ("before").
 * BENCH_E2E_VERBOSE=1 prints each run's blocks and journal groups to stderr.
 */
export async function benchJournalE2E(rounds = 3): Promise<Row[]> {
  const configs: E2EConfig[] = [
    { label: 'journal off', nodeArgs: ['--tx-journal', 'off'], runs: [] },
    { label: 'journal on', nodeArgs: ['--tx-journal', 'on'], runs: [] },
  ];
  const base = baselineMain();
  if (base) configs.push({ label: 'journal on, before', nodeArgs: ['--tx-journal', 'on'], main: base, runs: [] });
  for (let r = 0; r < rounds; r++) {
    for (const c of configs) {
      const { onLog, detail } = detailCollector();
      let stats: SubmissionStats | undefined;
      await benchHttpSubmission('uws', LANES, 160, 'raw keep-alive lanes', {
        label: c.label,
        nodeArgs: c.nodeArgs,
        main: c.main,
        onLog,
        onStats: (s) => (stats = s),
      });
      const run = { ...detail, stats: stats as SubmissionStats };
      c.runs.push(run);
      if (process.env.BENCH_E2E_VERBOSE === '1') process.stderr.write(`${c.label}: ${describeRun(run)}\n`);
    }
  }
  const stat = (runs: RunDetail[], k: 'acceptedPerSec' | 'includedPerSec') =>
    `${Math.round(median(runs.map((s) => s.stats[k]))).toLocaleString()} tx/s (runs: ${runs.map((s) => Math.round(s.stats[k]).toLocaleString()).join(' / ')})`;
  const cpu = (runs: RunDetail[]) =>
    runs.every((s) => s.stats.nodeCpuUs !== undefined)
      ? `; node CPU ${Math.round(median(runs.map((s) => s.stats.nodeCpuUs as number)))} µs per tx`
      : '';
  const rows: Row[] = configs.map((c, i) => ({
    name:
      i === 0 ? `HTTP submit -> inclusion, ${c.label} [uws, 10,240 transfers, 64 lanes]` : `HTTP submit -> inclusion, ${c.label}`,
    value: stat(c.runs, 'includedPerSec'),
    note: `accepted ${stat(c.runs, 'acceptedPerSec')}${cpu(c.runs)}; ${describeRun(c.runs[c.runs.length - 1])} (last run)`,
  }));
  const included = (c: E2EConfig) => median(c.runs.map((s) => s.stats.includedPerSec));
  for (const c of configs.slice(1)) {
    const ratio = included(c) / included(configs[0]);
    rows.push({
      name: `journal overhead on submit -> inclusion, ${c.label} (goal: within 10%)`,
      value: `${((1 - ratio) * 100).toFixed(1)}% slower`,
      note: ratio >= 0.9 ? 'met' : 'MISSED',
    });
  }
  return rows;
}

function describeRun(run: RunDetail): string {
  // Each lane has one submission in flight: its round trip is lanes / accepted rate.
  const cycle = ((LANES / run.stats.acceptedPerSec) * 1000).toFixed(2);
  const blocks = `round trip ${cycle} ms; blocks ${run.blockTxs.join('+')} txs (${run.blockMs.join('/')} ms)`;
  const j = run.journal;
  if (!j || j.groups === 0) return blocks;
  return `${blocks}; journal ${j.groups} groups, ${(j.records / j.groups).toFixed(1)} records per group, write ${(j.writeMs / j.groups).toFixed(2)} ms mean, ${j.maxWriteMs} ms max${j.waitMs === undefined ? '' : `, a submission waits ${(j.waitMs / j.records).toFixed(2)} ms for it`}`;
}

async function main(): Promise<void> {
  const which = process.argv[2] ?? 'all';
  const rows: Row[] = [];
  if (which === 'sinks' || which === 'all') rows.push(...(await benchJournalSinks()));
  if (which === 'e2e' || which === 'all') rows.push(...(await benchJournalE2E(Number(process.env.BENCH_E2E_ROUNDS ?? 3))));
  for (const r of rows) process.stdout.write(`| ${r.name} | ${r.value} | ${r.note ?? ''} |\n`);
}

if (process.argv[1]?.endsWith('journal.js')) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
