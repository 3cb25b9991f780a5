import { join } from 'node:path';
import test from 'ava';
import { dayOf } from '../../ts/chain/block-store.js';
import { Chain } from '../../ts/chain/chain.js';
import { HistoryUnavailableError, StaleStateViewError } from '../../ts/chain/state-history.js';
import { validateChain } from '../../ts/chain/validate.js';
import { rpcCodeOf } from '../../ts/rpc/index.js';
import { accountKey, decodeAccount } from '../../ts/state/index.js';
import { openRocksStore, changeSetPrefix, pendingChangeSetKey, prefixEnd } from '../../ts/storage/index.js';
import { NOW, openFixtureChain } from '../helpers/chain-fixture.js';
import {
  buildRandomChain,
  checkHeight,
  historyParams as params,
  rng,
  sorted,
  stateCopy,
  users,
} from '../helpers/history-chain.js';
import { tempDir } from '../helpers/util.js';

test('reads at random past heights equal the state snapshotted at each height, also after a restart', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let { chain, db } = await openFixtureChain(tmp.dir, params());
  const run = await buildRandomChain(chain, 40, 0xc0ffee);
  const rand = rng(7);
  const heights = [0, 1, chain.height, chain.height - 1, ...Array.from({ length: 10 }, () => rand(chain.height + 1))];
  for (const h of heights) await checkHeight(t, run, h);

  await db.close();
  ({ chain, db } = await openFixtureChain(tmp.dir, params()));
  run.chain = chain;
  t.is(chain.height, run.snapshots.length - 1);
  for (const h of heights) await checkHeight(t, run, h);
  // Blocks committed after the restart extend the same history.
  await buildRandomChain(chain, 5, 99, run);
  for (const h of [...heights, chain.height - 2]) await checkHeight(t, run, h);
  await t.throwsAsync(chain.stateAt(chain.height + 1), { message: /does not exist/ });
  await db.close();
});

test('a view keeps its height while blocks are committed and refuses reads once released', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const { chain, db } = await openFixtureChain(tmp.dir, params());
  const run = await buildRandomChain(chain, 6, 3);
  const view = await chain.stateAt(3);
  const before = [...run.snapshots[3].keys()].map((k) => view.get(k));
  await buildRandomChain(chain, 6, 4, run);
  t.deepEqual(
    [...run.snapshots[3].keys()].map((k) => view.get(k)),
    before,
  );
  view.release();
  t.throws(() => view.get(accountKey(users[0].address)), { instanceOf: StaleStateViewError });
  await db.close();
});

test('--history N prunes older change sets and names the oldest available height', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const open = async () => {
    const db = await openRocksStore(join(tmp.dir, 'db'));
    const chain = new Chain(params(), db, 64, { history: { kind: 'recent', blocks: 5 } });
    chain.now = () => NOW;
    await chain.open();
    return { chain, db };
  };
  let { chain, db } = await open();
  const run = await buildRandomChain(chain, 30, 11);
  // Pruning is the history indexer's, after the commits: let it catch up.
  await chain.blocks.history.flush();
  const oldest = chain.blocks.history.oldest;
  t.is(oldest, chain.height - 5);
  for (let h = oldest; h <= chain.height; h++) await checkHeight(t, run, h);
  const err = await t.throwsAsync(chain.stateAt(oldest - 1), { instanceOf: HistoryUnavailableError });
  t.regex(err?.message ?? '', new RegExp(`oldest available block is ${oldest}\\b`));
  t.is(err?.status, 'FAILED_PRECONDITION');
  t.is(err && rpcCodeOf(err), -32000);
  // The pruned change sets are gone from disk; the kept ones are there.
  t.is(db.rangeSync({ gte: changeSetPrefix(1), lt: changeSetPrefix(oldest + 1) }).length, 0);
  t.true(db.rangeSync({ gte: changeSetPrefix(oldest + 1), lt: prefixEnd(changeSetPrefix(chain.height)) }).length > 0);
  // Every change set is indexed: none is left in the pending table.
  t.is(db.rangeSync({ gte: pendingChangeSetKey(0), lt: prefixEnd(pendingChangeSetKey(0).subarray(0, 1)) }).length, 0);
  await db.close();
  ({ chain, db } = await open());
  t.is(chain.blocks.history.oldest, oldest);
  await db.close();
});

test('rollbackTo restores the state and drops later blocks atomically; the chain continues, restarts and validates', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let { chain, db } = await openFixtureChain(tmp.dir, params());
  const run = await buildRandomChain(chain, 25, 21);
  const target = 12;
  const dropped = (await chain.blocks.readRange(target + 1, chain.height)).flatMap((b) => b.transactions.map((tx) => tx.txid));
  const droppedHash = (await chain.blocks.getBlock(target + 1))?.hash as string;
  const rolledBack: number[] = [];
  chain.on('rollback', (h) => rolledBack.push(h));
  const open = await chain.stateAt(20);
  await chain.rollbackTo(target);
  t.deepEqual(rolledBack, [target]);
  t.throws(() => open.get(accountKey(users[0].address)), { instanceOf: StaleStateViewError });
  open.release();
  t.is(chain.height, target);
  t.deepEqual(sorted(stateCopy(chain)), sorted(run.snapshots[target]));
  t.is(await chain.blocks.getBlock(target + 1), null);
  // The daily aggregates count only the blocks that remain (every block of this chain is dated the same day).
  const kept = await chain.blocks.readRange(1, target);
  const day = chain.blocks.dayRecord(dayOf(NOW));
  t.is(day.blocks, target);
  t.is(
    day.txs,
    kept.reduce((n, b) => n + b.transactions.length, 0),
  );
  t.is(await chain.blocks.heightOfHash(droppedHash), null);
  for (const id of dropped) t.is(await chain.blocks.txLocation(id), null);
  for (let h = 0; h <= target; h++) await checkHeight(t, run, h);
  await t.throwsAsync(chain.rollbackTo(target + 1), { message: /does not exist/ });

  // New blocks on the rolled-back head, with the nonces of the state at the target.
  run.snapshots.length = target + 1;
  for (const u of users) {
    const raw = run.snapshots[target].get(accountKey(u.address));
    run.nonces.set(u.address, raw ? decodeAccount(raw).nonce : 0n);
  }
  await buildRandomChain(chain, 8, 77, run);
  for (const h of [0, 5, target, target + 3, chain.height]) await checkHeight(t, run, h);
  const txCounts = users.map((u) => chain.blocks.txCount(u.address));

  await db.close();
  ({ chain, db } = await openFixtureChain(tmp.dir, params()));
  run.chain = chain;
  t.is(chain.height, target + 8);
  t.deepEqual(sorted(stateCopy(chain)), sorted(run.snapshots[chain.height]));
  t.deepEqual(
    users.map((u) => chain.blocks.txCount(u.address)),
    txCounts,
  );
  for (const h of [1, target, target + 5]) await checkHeight(t, run, h);
  const report = await validateChain(chain);
  t.true(report.valid, report.error ?? '');
  t.is(report.checked_blocks, chain.height + 1);
  // Full history: a rollback reaches genesis.
  await chain.rollbackTo(0);
  t.is(chain.height, 0);
  t.deepEqual(sorted(stateCopy(chain)), sorted(run.snapshots[0]));
  await db.close();
});
