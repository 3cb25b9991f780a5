import test, { type ExecutionContext } from 'ava';
import { checkBody, int, obj, schemaError, str } from '../../ts/api/schema.js';
import { Chain, PRESET_ACTIVATION } from '../../ts/chain/index.js';
import { randomKeyPair, scheduledReward, BASE_PER_COIN } from '../../ts/ledger/index.js';
import { ChainIndex, DAY_SECONDS } from '../../ts/indexes/index.js';
import { openRocksStore } from '../../ts/storage/index.js';
import { toHex } from '../../ts/util/index.js';
import { tempDir } from '../helpers/util.js';
import { alice, bob, transfer } from './rest-fixture.js';

/** A dev chain in a temp RocksDB whose genesis is `age` seconds old, with a `window`-block in-memory window. */
async function openTestChain(t: ExecutionContext, age: number, window: number) {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const v = randomKeyPair();
  const db = await openRocksStore(tmp.dir);
  t.teardown(() => db.close());
  const chain = new Chain(
    {
      network: 'dev',
      chainId: 7120,
      genesisTimestamp: Math.floor(Date.now() / 1000) - age,
      activation: PRESET_ACTIVATION.dev,
      validators: [{ address: v.address, public_key: toHex(v.publicKey), name: 'v' }],
      alloc: new Map([[alice.address, 1000n * BASE_PER_COIN]]),
      evmHardfork: 'prague',
      epochLength: 3600,
    },
    db,
    window,
  );
  await chain.open();
  return { chain, v };
}

test('ChainIndex backfills in bounded steps across the window/disk boundary and folds new blocks live', async (t) => {
  // A 4-block window: most reads go to disk.
  const { chain, v } = await openTestChain(t, 100, 4);
  const now = Math.floor(Date.now() / 1000);
  for (let h = 1; h <= 25; h++) {
    const txs = h % 5 === 0 ? [transfer(alice, bob.address, BigInt(h / 5 - 1))] : [];
    await chain.commit(await chain.propose(txs, v, now - 30 + h));
  }
  const range = await chain.blocks.readRange(0, 99);
  t.deepEqual(
    range.map((b) => b.index),
    Array.from({ length: 26 }, (_, i) => i),
  );
  t.deepEqual(
    (await chain.blocks.readRange(19, 23)).map((b) => b.index),
    [19, 20, 21, 22, 23],
  );
  t.deepEqual(await chain.blocks.readRange(30, 40), []);
  t.deepEqual(await chain.blocks.firstAddressTx(bob.address), { height: 5, index: 0 });
  t.is(await chain.blocks.firstAddressTx(v.address), null);

  const idx = new ChainIndex(chain);
  await idx.ensure(10);
  t.deepEqual(idx.coverage, { from_height: 16, to_height: 25, complete: false });
  t.is(idx.producers.get(v.address)?.blocks, 10);
  t.false(idx.coversSince(0));
  await idx.ensure(10);
  t.is(idx.coverage.from_height, 6);
  await idx.ensure(100);
  t.deepEqual(idx.coverage, { from_height: 1, to_height: 25, complete: true });
  t.true(idx.coversSince(0));
  const tally = idx.producers.get(v.address)!;
  t.is(tally.blocks, 25);
  t.is(tally.lastHeight, 25);
  t.is(tally.feesBase, 5n * 5_000n, 'floor(fee/2) of 5 transfers');
  let reward = 0n;
  for (let h = 1; h <= 25; h++) reward += scheduledReward(h);
  t.is(tally.rewardBase, reward);
  t.is(idx.epochs.get(0)?.blocks, 25);
  t.is(idx.epochs.get(0)?.txs, 5);
  const today = idx.days.get(Math.floor(now / DAY_SECONDS)) ?? idx.days.get(Math.floor((now - 30) / DAY_SECONDS));
  t.truthy(today);
  t.true(idx.recentActivity(3600).txs === 5 && idx.recentActivity(3600).blocks === 25);
  // New blocks are folded from the chain's 'block' event, with the executed reward.
  await chain.commit(await chain.propose([transfer(alice, bob.address, 5n)], v, now));
  t.deepEqual(idx.coverage, { from_height: 1, to_height: 26, complete: true });
  t.is(idx.producers.get(v.address)?.blocks, 26);
  t.is(idx.recentActivity(3600).txs, 6);
  // alice and bob transacted first in this chain's blocks; a day holding those blocks counts them as new.
  let news = 0;
  for (const d of idx.days.values()) news += (await idx.newAddresses(d)) ?? 0;
  t.is(news, 2);
});

test('schemaError and checkBody: types, bounds (bigint exact), formats, required and unknown fields', (t) => {
  const s = obj(
    { name: str('n', { minLength: 1, pattern: '^[a-z]+$' }), n: int('n', { maximum: (1n << 64n) - 1n }), tag: str() },
    { closed: true, optional: ['tag'] },
  );
  t.is(schemaError({ name: 'ab', n: 5 }, s), null);
  t.is(schemaError({ name: 'ab', n: 18446744073709551615n }, s), null);
  t.is(schemaError({ name: 'ab', n: 18446744073709551616n }, s), 'n must be <= 18446744073709551615');
  t.is(schemaError({ name: 'ab', n: -1 }, s), 'n must be >= 0');
  t.is(schemaError({ name: 'ab', n: 1.5 }, s), 'n must be an integer');
  t.is(schemaError({ name: 'AB', n: 1 }, s), 'name has an invalid format (n)');
  t.is(schemaError({ n: 1 }, s), 'missing field name');
  t.is(schemaError({ name: 'ab', n: 1, x: 1 }, s), 'unknown field x');
  t.is(schemaError([], s), 'value must be an object');
  t.is(schemaError({ a: { b: [1, 'x'] } }, obj({ a: obj({ b: { type: 'array', items: int() } }) })), 'a.b[1] must be an integer');
  t.deepEqual(checkBody(Buffer.from('{"name":"ok","n":12345678901234567890}'), s), { name: 'ok', n: 12345678901234567890n });
  t.throws(() => checkBody(Buffer.from('{"name":"ok"'), s), { message: 'malformed JSON body' });
});

test('ChainIndex warm-up folds the history in the background; requests meanwhile never wait for more than its last step', async (t) => {
  const { chain, v } = await openTestChain(t, 1000, 8);
  const now = Math.floor(Date.now() / 1000);
  for (let h = 1; h <= 300; h++) await chain.commit(await chain.propose([], v, now - 400 + h));

  const idx = new ChainIndex(chain);
  const warm = idx.warm(10);
  t.true(idx.isWarming);
  // A request while 300 blocks are left: answered from what is folded, without backfilling itself.
  await idx.ensure();
  t.false(idx.coverage.complete);
  const seen: number[] = [];
  while (idx.isWarming) {
    seen.push(idx.coverage.from_height);
    await idx.ensure();
    // A turn of the event loop, as between two requests.
    await new Promise((resolve) => setImmediate(resolve));
  }
  await warm.done;
  t.deepEqual(idx.coverage, { from_height: 1, to_height: 300, complete: true });
  t.is(idx.producers.get(v.address)?.blocks, 300);
  t.true(seen.length >= 20, `folded in steps of 10 blocks between requests (${seen.length} turns)`);
  t.true(
    seen.every((from, i) => i === 0 || from <= seen[i - 1]),
    'coverage only grows',
  );

  // Stopping ends the warm-up after its step in flight; a later request backfills by itself again.
  const other = new ChainIndex(chain);
  await other.warm(10).stop();
  t.false(other.isWarming);
  t.false(other.coverage.complete);
  await other.ensure();
  t.true(other.coverage.complete);
});
