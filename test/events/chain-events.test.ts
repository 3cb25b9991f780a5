import test from 'ava';
import { signTransaction } from '../../ts/ledger/index.js';
import type { Block, Chain } from '../../ts/chain/index.js';
import { ChainEventFeed, ChainSubscription } from '../../ts/events/chain-events.js';
import { ResumableSubscription } from '../../ts/events/event-replay.js';
import { CHAIN_ID, devKey } from '../helpers/evm.js';
import { startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

test('the event feed delivers finalized blocks in height order and admitted transactions', async (t) => {
  const n = await startTestNode({ blockTimeMs: 100 });
  t.teardown(() => n.stop());
  const feed = n.node.ctx.events;
  if (!feed) return t.fail('node has no event feed');
  const sub = new ChainSubscription(feed, 1024);
  t.teardown(() => sub.close());
  const heights: number[] = [];
  const pending: string[] = [];
  const a = devKey(0);
  const tx = signTransaction(
    { from: a.address, to: devKey(1).address, amount: 5n, fee: 10_000n, nonce: 0n, chain_id: CHAIN_ID },
    a,
  );
  await n.node.ctx.admission.submit(tx);
  await waitFor(
    async () => {
      for (let item = sub.poll(); item; item = sub.poll()) {
        if (!('event' in item)) continue;
        if (item.event.kind === 'block_finalized') heights.push(item.event.block.index);
        else pending.push(item.event.tx.txid);
      }
      return heights.length >= 4;
    },
    30_000,
    'four blocks',
  );
  t.deepEqual(pending, [tx.txid]);
  for (let i = 1; i < heights.length; i++) t.is(heights[i], heights[i - 1] + 1);
});

test('a subscription that falls behind is told how many events it lost, then gets the newest', async (t) => {
  const n = await startTestNode({ blockTimeMs: 50 });
  t.teardown(() => n.stop());
  const feed = n.node.ctx.events;
  if (!feed) return t.fail('node has no event feed');
  const sub = new ChainSubscription(feed, 2, new Set(['block_finalized']));
  t.teardown(() => sub.close());
  const start = n.node.ctx.chain.height;
  await waitFor(() => n.node.ctx.chain.height >= start + 6, 30_000, 'six blocks');
  const first = sub.poll();
  t.truthy(first && 'lagged' in first && first.lagged >= 3);
  const a = sub.poll();
  const b = sub.poll();
  if (!a || !b || !('event' in a) || !('event' in b)) return t.fail('expected two events after the lag marker');
  if (a.event.kind !== 'block_finalized' || b.event.kind !== 'block_finalized') return t.fail('block events only');
  t.is(b.event.block.index, a.event.block.index + 1);
});

test('whenReady wakes a waiting subscriber synchronously from the push, once; takeNow gives what is queued without waiting', (t) => {
  const feed = new ChainEventFeed();
  // Live only (no start height): the chain is never read.
  const sub = new ResumableSubscription({ chain: {} as Chain, events: feed }, { maxQueued: 4 });
  const block = (index: number) => ({ kind: 'block_finalized' as const, block: { index } as Block, result: null });
  t.is(sub.takeNow(8), undefined, 'nothing queued yet');
  let woken = 0;
  sub.whenReady(() => woken++);
  t.is(woken, 0);
  feed.emit(block(1));
  t.is(woken, 1, 'woken inside the emit');
  feed.emit(block(2));
  t.is(woken, 1, 'a waiter runs once');
  sub.whenReady(() => woken++);
  t.is(woken, 2, 'at once when something is queued');
  const got = sub.takeNow(8) ?? [];
  t.deepEqual(
    got.map((i) => ('event' in i && i.event.kind === 'block_finalized' ? i.event.block.index : -1)),
    [1, 2],
  );
  // Past the bound: the lag marker first, then the newest, as take() gives them.
  for (let h = 3; h <= 9; h++) feed.emit(block(h));
  const lagged = sub.takeNow(2) ?? [];
  t.deepEqual(lagged[0], { lagged: 3 });
  t.is(lagged.length, 2);
  sub.whenReady(() => woken++);
  t.is(woken, 3, 'the rest is still queued');
  sub.takeNow(8);
  sub.whenReady(() => woken++);
  sub.close();
  t.is(woken, 4, 'close wakes the waiter');
  t.is(sub.takeNow(8), null, 'closed');
});
