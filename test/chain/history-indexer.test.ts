/**
 * The state history's index is built after the block commits, by a background step (state-history.ts):
 * reads at heights it has not indexed yet, rollbacks across its marker, pruning while it is behind, and a
 * process killed between the commits and the index batches.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { Chain } from '../../ts/chain/chain.js';
import type { HistoryRetention } from '../../ts/chain/state-history.js';
import { validateChain } from '../../ts/chain/validate.js';
import { accountKey, decodeAccount } from '../../ts/state/index.js';
import { type KvStore, openRocksStore, changeSetPrefix, pendingChangeSetKey, prefixEnd } from '../../ts/storage/index.js';
import { NOW } from '../helpers/chain-fixture.js';
import {
  type Run,
  buildRandomChain,
  checkHeight,
  historyParams,
  rng,
  runFromJson,
  sorted,
  stateCopy,
  users,
} from '../helpers/history-chain.js';
import { tempDir, waitFor } from '../helpers/util.js';

const PENDING = pendingChangeSetKey(0).subarray(0, 1);

/** Open the chain in `dir`, its history indexer paused from the start when `paused` (resume with the returned function). */
async function open(
  dir: string,
  opts: { paused?: boolean; history?: HistoryRetention } = {},
): Promise<{ chain: Chain; db: KvStore; resume: () => void }> {
  const db = await openRocksStore(join(dir, 'db'));
  const chain = new Chain(historyParams(), db, 64, { history: opts.history });
  chain.now = () => NOW;
  const resume = opts.paused ? await chain.blocks.history.pauseIndexing() : () => undefined;
  await chain.open();
  return { chain, db, resume };
}

const pendingCount = (db: KvStore): number => db.rangeSync({ gte: PENDING, lt: prefixEnd(PENDING) }).length;

/** The nonces a run continues from after it was cut back to `height`. */
function cutRun(run: Run, height: number): void {
  run.snapshots.length = height + 1;
  for (const u of users) {
    const raw = run.snapshots[height].get(accountKey(u.address));
    run.nonces.set(u.address, raw ? decodeAccount(raw).nonce : 0n);
  }
}

test('reads at heights the index has not reached equal the state at each height, before and after it catches up', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let { chain, db } = await open(tmp.dir);
  const history = chain.blocks.history;
  const run = await buildRandomChain(chain, 14, 0x1d3);
  await history.flush();
  const marker = chain.height;
  t.is(history.indexed, marker);
  const resume = await history.pauseIndexing();
  await buildRandomChain(chain, 15, 0x2d3, run);
  t.is(history.indexed, marker, 'the paused indexer did not move');
  t.true(pendingCount(db) > 0);
  const rand = rng(5);
  const heights = [0, 1, marker - 1, marker, marker + 1, chain.height - 1, chain.height];
  for (let i = 0; i < 6; i++) heights.push(rand(chain.height + 1));
  for (const h of heights) await checkHeight(t, run, h);

  // A view opened while the index is behind keeps answering the same as the indexer catches up under it.
  const view = await chain.stateAt(marker - 2);
  const keys = [...run.snapshots[marker - 2].keys()];
  const before = keys.map((k) => view.get(k));
  resume();
  await history.flush();
  t.is(history.indexed, chain.height);
  t.is(pendingCount(db), 0);
  t.deepEqual(
    keys.map((k) => view.get(k)),
    before,
  );
  view.release();
  for (const h of heights) await checkHeight(t, run, h);
  await db.close();

  ({ chain, db } = await open(tmp.dir));
  run.chain = chain;
  for (const h of heights) await checkHeight(t, run, h);
  await db.close();
});

test('rollbacks above and below the index marker drop pending and indexed change sets; the chain continues and restarts', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let { chain, db } = await open(tmp.dir);
  const history = chain.blocks.history;
  const run = await buildRandomChain(chain, 9, 0x3d3);
  await history.flush();
  const marker = chain.height;
  const resume = await history.pauseIndexing();
  await buildRandomChain(chain, 10, 0x4d3, run);

  // Above the marker: only pending change sets are dropped.
  const above = marker + 4;
  await chain.rollbackTo(above);
  t.is(chain.height, above);
  t.is(history.indexed, marker);
  t.deepEqual(sorted(stateCopy(chain)), sorted(run.snapshots[above]));
  // Change sets of the kept blocks above the marker wait in the pending table; none of the removed ones is left.
  t.true(pendingCount(db) > 0 && pendingCount(db) <= above - marker);
  t.is(db.rangeSync({ gte: pendingChangeSetKey(above + 1), lt: prefixEnd(PENDING) }).length, 0);
  cutRun(run, above);
  for (const h of [0, marker - 1, marker, above - 1, above]) await checkHeight(t, run, h);

  // Below the marker: indexed blocks go too, and the marker comes down with them.
  const below = marker - 3;
  await chain.rollbackTo(below);
  t.is(chain.height, below);
  t.is(history.indexed, below);
  t.is(pendingCount(db), 0);
  t.is(db.rangeSync({ gte: changeSetPrefix(below + 1), lt: prefixEnd(changeSetPrefix(0).subarray(0, 1)) }).length, 0);
  t.deepEqual(sorted(stateCopy(chain)), sorted(run.snapshots[below]));
  cutRun(run, below);
  for (const h of [0, 1, below - 1, below]) await checkHeight(t, run, h);

  // The chain goes on with the indexer still paused, then it catches up.
  await buildRandomChain(chain, 6, 0x5d3, run);
  for (const h of [below, below + 1, chain.height]) await checkHeight(t, run, h);
  resume();
  await history.flush();
  t.is(history.indexed, chain.height);
  for (const h of [1, below, below + 3, chain.height]) await checkHeight(t, run, h);
  await db.close();

  ({ chain, db } = await open(tmp.dir));
  run.chain = chain;
  t.deepEqual(sorted(stateCopy(chain)), sorted(run.snapshots[chain.height]));
  const report = await validateChain(chain);
  t.true(report.valid, report.error ?? '');
  await chain.rollbackTo(0);
  t.deepEqual(sorted(stateCopy(chain)), sorted(run.snapshots[0]));
  await db.close();
});

test('--history N prunes only indexed blocks while the indexer is behind, and catches up once it runs', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const retention: HistoryRetention = { kind: 'recent', blocks: 4 };
  const { chain, db } = await open(tmp.dir, { history: retention });
  const history = chain.blocks.history;
  const run = await buildRandomChain(chain, 8, 0x6d3);
  await history.flush();
  t.is(history.oldest, chain.height - 4);
  const resume = await history.pauseIndexing();
  const oldest = history.oldest;
  await buildRandomChain(chain, 12, 0x7d3, run);
  // Nothing is pruned past what is indexed: the blocks between stay readable.
  t.is(history.oldest, oldest);
  for (const h of [oldest, oldest + 1, chain.height - 5, chain.height]) await checkHeight(t, run, h);
  resume();
  await history.flush();
  t.is(history.oldest, chain.height - 4);
  t.is(history.indexed, chain.height);
  for (let h = history.oldest; h <= chain.height; h++) await checkHeight(t, run, h);
  t.is(db.rangeSync({ gte: changeSetPrefix(1), lt: changeSetPrefix(history.oldest + 1) }).length, 0);
  await t.throwsAsync(chain.stateAt(history.oldest - 1), { message: /oldest available block is/ });
  await db.close();
});

test('a process killed between its block commits and their index batches restarts with the index behind and catches up', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const indexed = 8;
  const behind = 9;
  const child = spawn(
    process.execPath,
    [fileURLToPath(new URL('../helpers/history-crash-child.js', import.meta.url)), tmp.dir, String(indexed), String(behind)],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (d) => {
    stderr += d;
  });
  const [code, signal] = await new Promise<[number | null, string | null]>((r) => child.on('exit', (c, s) => r([c, s])));
  t.is(signal, 'SIGKILL', `child exited with ${code}: ${stderr}`);

  // Opened with the indexer held back: the reads above the marker come from the pending change sets on disk.
  let { chain, db } = await open(tmp.dir, { paused: true });
  const run = runFromJson(chain, readFileSync(join(tmp.dir, 'run.json'), 'utf8'));
  const history = chain.blocks.history;
  t.is(chain.height, indexed + behind);
  t.is(history.indexed, indexed);
  t.true(pendingCount(db) > 0 && pendingCount(db) <= behind);
  const heights = [0, indexed - 1, indexed, indexed + 1, indexed + 5, chain.height - 1, chain.height];
  for (const h of heights) await checkHeight(t, run, h);
  await db.close();

  // Opened as a node opens it, the indexer resumes by itself and catches up.
  ({ chain, db } = await open(tmp.dir));
  run.chain = chain;
  const reopened = chain.blocks.history;
  await waitFor(() => reopened.indexed === chain.height, 15_000, 'the indexer to catch up');
  t.is(pendingCount(db), 0);
  for (const h of heights) await checkHeight(t, run, h);
  await db.close();
});
