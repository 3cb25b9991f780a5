/**
 * Before/after measurements of the storage hot paths against an earlier build (`BENCH_BASELINE=<dir>`, made by
 * scripts/bench-baseline.sh), with CPU time next to wall clock (the shared machine's load makes wall clock swing
 * 2-3x between runs): `node dist/bench/storage-ab.js commit|history|stateroot [rounds]`. Without BENCH_BASELINE
 * only this build is measured.
 * - commit: both builds' chains in this process, alternating: CPU time and wall clock of `chain.commit` of a
 *   10,000-transfer block (2,000 senders), after two warm-up rounds, and production + commit.
 * - history: the history's share of that commit (with / without its ops, alternating) and the CPU of the
 *   history index step after it, per build.
 * - stateroot: a child process per build and round (each holds a 1,000,000-account state and loads its own
 *   addon): wall clock and CPU time (all threads) of applying 10,000 changed accounts and the root, the loop of
 *   benchStateRoot (bench/ledger.ts).
 */
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type * as ChainModule from '../ts/chain/chain.js';
import type * as KeysModule from '../ts/ledger/keys.js';
import type * as StateModule from '../ts/state/state-store.js';
import type * as StorageModule from '../ts/storage/index.js';
import type * as FixturesModule from './fixtures.js';
import type * as LedgerBenchModule from './ledger.js';
import type { Row } from './ledger.js';

const HERE = fileURLToPath(new URL('.', import.meta.url));
/** This build's dist (this file runs from dist/bench). */
const THIS_DIST = resolve(HERE, '..');

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const fmt = (xs: number[]): string => xs.map((x) => x.toFixed(0)).join(' / ');

interface Build {
  label: string;
  dist: string;
}

function builds(): Build[] {
  const base = process.env.BENCH_BASELINE;
  const out: Build[] = base ? [{ label: `before (${base})`, dist: resolve(base, 'dist') }] : [];
  out.push({ label: 'after (this build)', dist: THIS_DIST });
  return out;
}

async function load<T>(dist: string, path: string): Promise<T> {
  return (await import(join(dist, path))) as T;
}

/** A build's chain, store and a 10,000-transfer block's transactions (2,000 senders), loaded from its dist. */
async function commitFixture(b: Build) {
  const fx = await load<typeof FixturesModule>(b.dist, 'bench/fixtures.js');
  const keys = fx.senderKeys(2000);
  const validator = (await load<typeof KeysModule>(b.dist, 'ts/ledger/keys.js')).randomKeyPair();
  return {
    ...b,
    Chain: (await load<typeof ChainModule>(b.dist, 'ts/chain/chain.js')).Chain,
    openRocksStore: (await load<typeof StorageModule>(b.dist, 'ts/storage/index.js')).openRocksStore,
    admitForBench: (await load<typeof LedgerBenchModule>(b.dist, 'bench/ledger.js')).admitForBench,
    txs: fx.signedTransfers(keys, 5, 7120),
    validator,
    params: fx.benchChainParams(validator, keys),
  };
}

type CommitFixture = Awaited<ReturnType<typeof commitFixture>>;

/** A fresh chain of the fixture's build (genesis in a temp dir, clock fixed at `ts`) for `fn`, then removed. */
async function onFreshChain(
  m: CommitFixture,
  ts: number,
  fn: (chain: InstanceType<CommitFixture['Chain']>) => Promise<void>,
): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-ab-'));
  const db = await m.openRocksStore(join(dir, 'db'));
  try {
    const chain = new m.Chain(m.params, db, 1000);
    await chain.open();
    chain.now = () => ts;
    await fn(chain);
  } finally {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Commit of a 10,000-transfer block, every build in turn, `rounds` times (the first two not counted). */
export async function abCommit(rounds = 12): Promise<Row[]> {
  const ts = 1_700_000_001;
  const runs = await Promise.all(
    builds().map(async (b) => ({
      ...(await commitFixture(b)),
      cpu: [] as number[],
      wall: [] as number[],
      total: [] as number[],
    })),
  );
  for (let r = 0; r < rounds; r++) {
    for (const m of runs) {
      await onFreshChain(m, ts, async (chain) => {
        m.admitForBench(chain, m.txs, ts);
        const t0 = performance.now();
        const p = await chain.propose(m.txs, m.validator, ts);
        const c1 = cpuMs();
        const t1 = performance.now();
        await chain.commit(p);
        const t2 = performance.now();
        if (r >= 2) {
          m.cpu.push(cpuMs() - c1);
          m.wall.push(t2 - t1);
          m.total.push(t2 - t0);
        }
      });
    }
  }
  return runs.map((m) => ({
    name: `commit of a 10,000-transfer block [${m.label}]`,
    value: `CPU ${median(m.cpu).toFixed(1)} ms, wall ${median(m.wall).toFixed(0)} ms`,
    note: `medians of ${m.cpu.length} (CPU ${fmt(m.cpu)}); production + commit ${median(m.total).toFixed(0)} ms = ${Math.round(10_000 / (median(m.total) / 1000)).toLocaleString()} tx/s`,
  }));
}

/** What the history bench changes on a chain's StateHistory (the baseline's has no indexer: no `committed`, `flush`). */
interface HistoryHooks {
  commitOps: unknown;
  committed?: unknown;
  flush?: () => Promise<void>;
}

/**
 * The history's share of the commit of a 10,000-transfer block, every build in turn: the commit with the
 * history written and without it (its ops left out, and no indexing), the two modes in alternating order,
 * `rounds` times after two warm-up rounds; and, where the build has the background indexer, the CPU of its
 * step for the block (run right after the commit, timed apart).
 */
export async function abHistoryCommit(rounds = 12): Promise<Row[]> {
  const ts = 1_700_000_001;
  const runs = await Promise.all(
    builds().map(async (b) => ({
      ...(await commitFixture(b)),
      with: [] as number[],
      without: [] as number[],
      index: [] as number[],
    })),
  );
  for (let r = 0; r < rounds + 2; r++) {
    for (const m of runs) {
      for (const mode of r % 2 === 0 ? (['with', 'without'] as const) : (['without', 'with'] as const)) {
        await onFreshChain(m, ts, async (chain) => {
          const history = chain.blocks.history as unknown as HistoryHooks;
          if (mode === 'without') {
            history.commitOps = () => [];
            history.committed = () => undefined;
          }
          m.admitForBench(chain, m.txs, ts);
          const p = await chain.propose(m.txs, m.validator, ts);
          const c1 = cpuMs();
          await chain.commit(p);
          const cpu = cpuMs() - c1;
          let index = -1;
          if (mode === 'with' && history.flush) {
            const i0 = cpuMs();
            await history.flush();
            index = cpuMs() - i0;
          }
          if (r >= 2) {
            m[mode].push(cpu);
            if (index >= 0) m.index.push(index);
          }
        });
      }
    }
  }
  return runs.flatMap((m) => {
    const added = median(m.with) / median(m.without) - 1;
    // The two modes of a round ran back to back: their difference cancels most of the load's slow swings.
    const paired = median(m.with.map((c, i) => c - m.without[i]));
    const rows: Row[] = [
      {
        name: `history: commit cost added (CPU of the commit with / without history) [${m.label}]`,
        value: `${(added * 100).toFixed(1)}%`,
        note: `medians of ${m.with.length}: ${median(m.with).toFixed(1)} / ${median(m.without).toFixed(1)} ms; median of the paired differences ${paired.toFixed(1)} ms (${((paired / median(m.without)) * 100).toFixed(1)}%) (with ${fmt(m.with)}; without ${fmt(m.without)})`,
      },
    ];
    if (m.index.length > 0) {
      const total = (median(m.with) + median(m.index)) / median(m.without) - 1;
      rows.push({
        name: `history: index step after the commit, CPU per block [${m.label}]`,
        value: `${median(m.index).toFixed(1)} ms`,
        note: `medians of ${m.index.length} (${fmt(m.index)}); commit + index step against the commit without history: +${(total * 100).toFixed(1)}%`,
      });
    }
    return rows;
  });
}

/** Child: the state-root rounds of benchStateRoot on the StateStore of `dist`; prints wall and CPU per round. */
async function stateRootChild(dist: string): Promise<void> {
  const { StateStore, keyStr } = await load<typeof StateModule>(dist, 'ts/state/state-store.js');
  const total = 1_000_000;
  const touched = 10_000;
  const store = new StateStore();
  const keys: Buffer[] = [];
  for (let i = 0; i < total; i++) {
    const k = Buffer.concat([Buffer.from([1]), randomBytes(20)]);
    keys.push(k);
    store.load(k, randomBytes(40));
  }
  store.root();
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let round = -2; round < 9; round++) {
    const changes = new Map<string, Buffer>();
    for (let i = 0; i < touched; i++) changes.set(keyStr(keys[(i * 97 + (round + 2) * 7919) % total]), randomBytes(40));
    const c0 = cpuMs();
    const s = performance.now();
    store.applyChanges(changes);
    store.root();
    if (round >= 0) {
      wall.push(performance.now() - s);
      cpu.push(cpuMs() - c0);
    }
  }
  process.stdout.write(`${JSON.stringify({ wall, cpu })}\n`);
}

/** State root of 10,000 changed accounts among 1,000,000: a child per build and round, builds alternating. */
export function abStateRoot(rounds = 3): Row[] {
  const runs = builds().map((b) => ({ ...b, wall: [] as number[], cpu: [] as number[] }));
  for (let r = 0; r < rounds; r++) {
    for (const m of runs) {
      const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), 'stateroot-child', m.dist], {
        encoding: 'utf8',
        maxBuffer: 1 << 20,
      });
      const res = JSON.parse(out.trim()) as { wall: number[]; cpu: number[] };
      m.wall.push(median(res.wall));
      m.cpu.push(median(res.cpu));
    }
  }
  return runs.map((m) => ({
    name: `state root: update 10,000 touched among 1,000,000 [${m.label}]`,
    value: `${median(m.wall).toFixed(1)} ms wall, ${median(m.cpu).toFixed(1)} ms CPU`,
    note: `median of ${rounds} runs (each the median of 9 rounds after 2 warm-up rounds); runs wall ${fmt(m.wall)}, CPU ${fmt(m.cpu)} ms`,
  }));
}

async function main(): Promise<void> {
  const [what = 'commit', arg] = process.argv.slice(2);
  if (what === 'stateroot-child') return stateRootChild(arg as string);
  const rows =
    what === 'stateroot'
      ? abStateRoot(Number(arg ?? 3))
      : what === 'history'
        ? await abHistoryCommit(Number(arg ?? 12))
        : await abCommit(Number(arg ?? 12));
  for (const r of rows) process.stdout.write(`| ${r.name} | ${r.value} | ${r.note ?? ''} |\n`);
}

if (process.argv[1]?.endsWith('storage-ab.js')) {
  main().catch((err) => {
    process.stderr.write(`${(err as Error).stack}\n`);
    process.exit(1);
  });
}
