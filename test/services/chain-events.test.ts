import test from 'ava';
import { signTransaction } from '../../ts/ledger/transaction.js';
import { ChainSubscription } from '../../ts/services/chain-events.js';
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
