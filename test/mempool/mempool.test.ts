import test from 'ava';
import { type TxSource, TxAdmission } from '../../ts/mempool/admission.js';
import { DEFAULT_MEMPOOL_LIMITS, Mempool } from '../../ts/mempool/mempool.js';
import { type SignedTransaction, signTransaction } from '../../ts/ledger/index.js';
import { NOW, alice, bob, evmTransfer, openFixtureChain, proposerKey, transfer } from '../helpers/chain-fixture.js';
import { tempDir } from '../helpers/util.js';
import { join } from 'node:path';
import { TxJournal } from '../../ts/mempool/tx-journal.js';
import type { ExecutionContext } from 'ava';

async function setup(t: ExecutionContext, limits = DEFAULT_MEMPOOL_LIMITS) {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const fx = await openFixtureChain(tmp.dir);
  t.teardown(() => fx.db.close());
  const pool = new Mempool(limits);
  const admission = new TxAdmission(fx.chain, pool);
  admission.now = () => NOW;
  const submit = (tx: SignedTransaction, source: TxSource = 'api') => admission.submit(tx, source);
  /** Produce a block from the pool, as the PoA engine does. */
  const produce = async () => {
    const exec = await fx.chain.execute(pool.take(1000), proposerKey(fx.chain.params, fx.chain.height + 1).address, NOW);
    const p = fx.chain.seal(exec, proposerKey(fx.chain.params, fx.chain.height + 1));
    pool.onBlock(
      exec.result.included,
      exec.result.dropped.map((d) => d.tx),
    );
    await fx.chain.commit(p);
    admission.onBlock();
    return p.block;
  };
  return { ...fx, pool, admission, submit, produce };
}

test('gossiped future nonces wait in the queue and are promoted, in order, when the gap fills', async (t) => {
  const s = await setup(t);
  t.is(await s.submit(transfer(alice, 2n), 'gossip'), 'queued');
  t.is(await s.submit(transfer(alice, 1n), 'gossip'), 'queued');
  t.is(s.pool.size, 0);
  t.is(s.pool.queuedSize, 2);
  t.is(await s.submit(transfer(alice, 0n), 'gossip'), 'pending');
  t.deepEqual(
    s.pool.pendingOf(alice.address).map((tx) => tx.nonce),
    [0n, 1n, 2n],
  );
  t.is(s.pool.queuedSize, 0);
  const b = await s.produce();
  t.is(b.tx_count, 3);
});

test('API submissions keep the spec: a nonce gap is refused with "Invalid nonce: expected X, got Y"', async (t) => {
  const s = await setup(t);
  await t.throwsAsync(s.submit(transfer(alice, 5n)), { message: 'Invalid nonce: expected 0, got 5' });
  t.is(s.pool.queuedSize, 0);
});

test('a block promotes queued transactions its new nonces unblock; stale and expired queued entries are dropped', async (t) => {
  const s = await setup(t, { ...DEFAULT_MEMPOOL_LIMITS, queueLifetimeMs: 60_000 });
  await s.submit(transfer(alice, 0n));
  await s.submit(transfer(alice, 2n), 'gossip');
  await s.submit(transfer(bob, 3n), 'gossip');
  // alice's nonce 1 arrives inside a block made elsewhere: its import moves alice to nonce 2.
  await s.produce(); // includes alice 0
  t.is(s.pool.queuedSize, 2);
  t.true(s.pool.enqueue(transfer(bob, 7n), Date.now() - 120_000)); // already too old
  const b1 = transfer(alice, 1n);
  const otherDir = tempDir();
  const other = await openFixtureChain(otherDir.dir);
  t.teardown(async () => {
    await other.db.close();
    otherDir.cleanup();
  });
  await other.chain.importBlock((await s.chain.blocks.getBlock(1))!);
  const p = await other.chain.propose([b1], proposerKey(other.chain.params, 2), NOW);
  await s.chain.importBlock(p.block);
  s.admission.onBlock();
  t.deepEqual(
    s.pool.pendingOf(alice.address).map((tx) => tx.nonce),
    [2n],
  );
  t.deepEqual([...s.pool.queuedOf(bob.address).keys()], [3n]);
  t.is(s.pool.queuedSize, 1);
});

test('replacement needs a fee at least 10% higher; the replacement keeps its nonce place in the next block', async (t) => {
  const s = await setup(t);
  const first = transfer(alice, 0n, { fee: 100_000n });
  await s.submit(first);
  await s.submit(transfer(alice, 1n));
  await s.submit(transfer(bob, 0n));
  const cheap = transfer(alice, 0n, { fee: 109_999n, amount: 2n });
  const err = await t.throwsAsync(s.submit(cheap));
  t.regex(err?.message ?? '', /replacement transaction underpriced/);
  t.is((err as { reason?: string }).reason, 'replacement');
  const better = transfer(alice, 0n, { fee: 110_000n, amount: 3n });
  t.is(await s.submit(better), 'pending');
  t.false(s.pool.has(first.txid));
  t.true(s.pool.has(better.txid));
  t.is(s.pool.size, 3);
  // take() keeps each sender's nonce order although the replacement arrived last.
  const order = s.pool.take(10).map((tx) => `${tx.from_address === alice.address ? 'a' : 'b'}${tx.nonce}`);
  t.deepEqual(order, ['a0', 'b0', 'a1']);
  const b = await s.produce();
  t.is(b.tx_count, 3);
  t.is(b.transactions[0].txid, better.txid);
  t.is(b.transactions[0].amount, 3n);
  t.is(s.pool.size, 0);
});

test('EVM replacement compares prices per gas (10% bump on max fee and tip)', async (t) => {
  const s = await setup(t);
  const first = await evmTransfer(alice, 0);
  await s.admission.submitRaw(Buffer.from(first.signature, 'hex'));
  const same = await evmTransfer(alice, 0, bob.address, 10n ** 15n + 1n);
  await t.throwsAsync(s.admission.submitRaw(Buffer.from(same.signature, 'hex')), {
    message: /replacement transaction underpriced/,
  });
  t.true(s.pool.has(first.txid));
});

test("a replacement must still be affordable with the rest of the sender's pending spend", async (t) => {
  const s = await setup(t);
  await s.submit(transfer(alice, 0n));
  const huge = signTransaction(
    {
      from: alice.address,
      to: bob.address,
      amount: 999n * 100_000_000n,
      fee: 20_000n,
      nonce: 0n,
      chain_id: 7120,
      timestamp: 1_700_000_000,
    },
    alice,
  );
  t.is(await s.submit(huge), 'pending');
  const tooMuch = transfer(alice, 1n, { amount: 2n * 100_000_000n });
  await t.throwsAsync(s.submit(tooMuch), { message: /insufficient balance/ });
});

test('the future-nonce queue is bounded per sender', async (t) => {
  const s = await setup(t, { ...DEFAULT_MEMPOOL_LIMITS, maxQueuedPerSender: 2 });
  await s.submit(transfer(alice, 5n), 'gossip');
  await s.submit(transfer(alice, 6n), 'gossip');
  await t.throwsAsync(s.submit(transfer(alice, 7n), 'gossip'), { message: /future-nonce queue is full/ });
  t.is(s.pool.queuedSize, 2);
});

test('a transaction dated far in the future is refused at admission', async (t) => {
  const s = await setup(t);
  await t.throwsAsync(s.submit(transfer(alice, 0n, { timestamp: 9_999_999_999 })), {
    message: /timestamp 9999999999 is more than 300 s ahead/,
  });
  t.is(s.pool.size, 0);
});

test('journaled admission: what admission refuses after its record was written does not come back at the next start', async (t) => {
  const s = await setup(t, { ...DEFAULT_MEMPOOL_LIMITS, maxTotal: 1 });
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const dir = join(tmp.dir, 'tx-journal');
  const { journal } = await TxJournal.open(dir);
  s.admission.journal = journal;
  const a = transfer(alice, 0n);
  const b = transfer(bob, 0n);
  await s.submit(a);
  // Refused because the pool is full: a reason a fresh pool at the next start would not have.
  await t.throwsAsync(s.submit(b), { message: /mempool is full/ });
  await journal.close();
  const reopened = await TxJournal.open(dir);
  t.deepEqual(
    reopened.replay.map((tx) => tx.txid),
    [a.txid],
  );
  await reopened.journal.close();
});

test('pending spend follows the pending list through admission, replacement, blocks and restore', async (t) => {
  const s = await setup(t);
  const sum = () => s.pool.pendingOf(alice.address).reduce((a, tx) => a + tx.amount + tx.fee, 0n);
  for (let n = 0n; n < 4n; n++) await s.submit(transfer(alice, n, { amount: 1_000n + n }));
  t.is(s.pool.pendingSpend(alice.address), sum());
  await s.submit(transfer(alice, 2n, { fee: 20_000n }));
  t.is(s.pool.pendingOf(alice.address)[2].fee, 20_000n);
  t.is(s.pool.pendingSpend(alice.address), sum());
  const before = s.pool.contents();
  await s.produce();
  t.is(s.pool.pendingOf(alice.address).length, 0);
  t.is(s.pool.pendingSpend(alice.address), 0n);
  s.pool.restore(before);
  t.is(s.pool.pendingOf(alice.address).length, 4);
  t.is(s.pool.pendingSpend(alice.address), sum());
  t.is(s.pool.pendingSpend(bob.address), 0n);
});
