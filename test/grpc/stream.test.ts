/**
 * StreamEvents with a client built only from the .proto: finalized blocks in order from subscription,
 * from_sequence resume (from disk, then live, no gap and no repeat), filters (pending transactions by
 * address, EVM logs by address and topic, headers only), bad filters, and the lag behaviour of a slow consumer.
 */
import anyTest, { type TestFn } from 'ava';
import { ethers } from 'ethers';
import { signTransaction } from '../../ts/ledger/index.js';
import { compiled } from '../helpers/contracts.js';
import { CHAIN_ID, devKey, devPrivateKey } from '../helpers/evm.js';
import { type TestNode, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';
import { type Client, bytesHex, collect, connect, grpc, hexBytes, unary } from './client.js';

const test = anyTest as TestFn<{ n: TestNode; client: Client }>;
const { status } = grpc;

test.before(async (t) => {
  const n = await startTestNode({ grpcPort: 0, windowSize: 4, blockTimeMs: 100 });
  t.context = { n, client: connect(n.node.grpc!.port) };
  await waitFor(() => n.node.ctx.chain.height >= 12, 30_000, 'blocks beyond the window');
});

test.after.always(async (t) => {
  t.context.client?.close();
  await t.context.n?.stop();
});

const heights = (events: any[]) =>
  events.filter((e) => e.event === 'blockFinalized').map((e) => Number(e.blockFinalized.block.index));

const contiguous = (hs: number[]) => hs.every((h, i) => i === 0 || h === hs[i - 1] + 1);

test('BlockFinalized for each block from subscription on, in height order; sequence = height', async (t) => {
  const { n, client } = t.context;
  const head = n.node.ctx.chain.height;
  const { events, error } = await collect(client.StreamEvents({}), (e) => e.length >= 5);
  t.falsy(error);
  const hs = heights(events);
  t.is(hs.length, 5);
  t.true(hs[0] > head, 'nothing committed before the subscription');
  t.true(contiguous(hs), `in order without gaps: ${hs}`);
  for (const e of events) t.is(e.sequence, e.blockFinalized.block.index);
  const stored = (await n.node.ctx.chain.blocks.getBlock(hs[0]))!;
  t.is(bytesHex(events[0].blockFinalized.block.hash.value), stored.hash);
});

test('from_sequence replays stored blocks (outside the window too), then continues live without gap or repeat', async (t) => {
  const { n, client } = t.context;
  const head = n.node.ctx.chain.height;
  t.true(n.node.ctx.chain.blocks.windowStart > 1);
  const { events, error } = await collect(client.StreamEvents({ fromSequence: '1' }), (e) => heights(e).at(-1)! >= head + 3);
  t.falsy(error);
  const hs = heights(events);
  t.is(hs[0], 1);
  t.true(contiguous(hs), 'replay and live join exactly');
  t.true(hs.at(-1)! >= head + 3, 'live blocks after the replay');
});

test('from_sequence beyond the head: nothing until that height is finalized', async (t) => {
  const { n, client } = t.context;
  const target = n.node.ctx.chain.height + 4;
  const { events } = await collect(client.StreamEvents({ fromSequence: String(target) }), (e) => e.length >= 2);
  t.deepEqual(heights(events), [target, target + 1]);
});

test('filter: pending transactions from or to the listed addresses, live; headers-only blocks keep tx_count', async (t) => {
  const { client } = t.context;
  const watched = devKey(8);
  const other = devKey(9);
  const deadline = { deadline: Date.now() + 60_000 };
  const pending = client.StreamEvents(
    { filter: { kinds: ['EVENT_KIND_PENDING_TRANSACTION'], addresses: [{ value: hexBytes(watched.address) }] } },
    deadline,
  );
  const headers = client.StreamEvents({ filter: { kinds: ['EVENT_KIND_BLOCK_FINALIZED'], omitTransactions: true } }, deadline);
  const gotPending = collect(pending, (e) => e.length >= 1);
  const gotBlock = collect(headers, (e) => e.some((x) => x.blockFinalized.block.txCount > 0));
  // Let both subscriptions register before submitting.
  await waitFor(() => t.context.n.node.ctx.events!.listenerCount >= 2, 5_000, 'subscriptions');
  const submit = async (key: ReturnType<typeof devKey>) => {
    const tx = signTransaction(
      { from: key.address, to: key.address, amount: 1n, fee: 10_000n, nonce: 0n, chain_id: CHAIN_ID },
      key,
    );
    const r = await unary(client, 'BroadcastTx', {
      signedTransaction: {
        txid: { value: hexBytes(tx.txid) },
        from: { value: hexBytes(tx.from_address) },
        to: { value: hexBytes(tx.to_address) },
        amount: { base: '1' },
        fee: { base: '10000' },
        nonce: '0',
        timestamp: String(tx.timestamp),
        chainId: CHAIN_ID,
        signature: hexBytes(tx.signature),
        publicKey: hexBytes(tx.public_key),
      },
    });
    t.falsy(r.error, r.error?.details);
    return tx.txid;
  };
  await submit(other);
  const txid = await submit(watched);
  const p = await gotPending;
  t.is(p.events.length, 1);
  t.is(p.events[0].event, 'pendingTransaction');
  t.is(bytesHex(p.events[0].pendingTransaction.transaction.txid.value), txid, 'only the watched sender');
  const b = await gotBlock;
  const withTxs = b.events.find((x) => x.blockFinalized.block.txCount > 0).blockFinalized.block;
  t.deepEqual(withTxs.transactions, [], 'omit_transactions leaves the list empty');
});

test('filter: EVM logs of a contract, after being deployed through BroadcastTx', async (t) => {
  const { client } = t.context;
  const { abi, bytecode } = compiled('Token');
  const w = new ethers.Wallet(devPrivateKey(0));
  const token = ethers.getCreateAddress({ from: w.address, nonce: 0 });
  const { data } = await new ethers.ContractFactory(abi, bytecode).getDeployTransaction('Gold', 'GLD', 1_000n);
  const transferTopic = ethers.id('Transfer(address,address,uint256)');
  const logs = client.StreamEvents(
    {
      filter: {
        kinds: ['EVENT_KIND_LOG', 'EVENT_KIND_BLOCK_FINALIZED'],
        addresses: [{ value: hexBytes(token) }],
        topics: [{ anyOf: [{ value: hexBytes(transferTopic) }] }],
      },
    },
    { deadline: Date.now() + 60_000 },
  );
  const got = collect(logs, (e) => e.some((x) => x.event === 'log'));
  await waitFor(() => t.context.n.node.ctx.events!.listenerCount >= 1, 5_000, 'subscription');
  const raw = await w.signTransaction({
    type: 2,
    chainId: CHAIN_ID,
    nonce: 0,
    to: null,
    data,
    gasLimit: 2_000_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  const sent = await unary(client, 'BroadcastTx', { rawEthereumTx: hexBytes(raw) });
  t.falsy(sent.error, sent.error?.details);
  const { events } = await got;
  const logIndex = events.findIndex((x) => x.event === 'log');
  const log = events[logIndex].log;
  t.is(`0x${bytesHex(log.address.value)}`, token.toLowerCase());
  t.is(`0x${bytesHex(log.topics[0].value)}`, transferTopic);
  t.is(`0x${bytesHex(log.transactionHash.value)}`, ethers.keccak256(raw));
  t.is(log.logIndex, 0);
  t.is(events[logIndex].sequence, log.blockHeight);
  // The block's own event comes first.
  t.is(events[logIndex - 1].event, 'blockFinalized');
  t.is(events[logIndex - 1].blockFinalized.block.index, log.blockHeight);
});

test('bad filters are INVALID_ARGUMENT before anything is streamed', async (t) => {
  const { client } = t.context;
  const cases: [object, RegExp][] = [
    [{ filter: { kinds: ['EVENT_KIND_UNSPECIFIED'] } }, /unknown event kind 0/],
    [{ filter: { kinds: [7] } }, /unknown event kind 7/],
    [{ filter: { addresses: [{ value: Buffer.alloc(21) }] } }, /filter.addresses\[0\] must be 20 bytes/],
    [{ filter: { topics: [{}, {}, {}, {}, {}] } }, /at most 4 positions/],
    [{ filter: { topics: [{ anyOf: [{ value: Buffer.alloc(3) }] }] } }, /must be 32 bytes/],
  ];
  for (const [req, message] of cases) {
    const { events, error } = await collect(client.StreamEvents(req), () => true);
    t.is(events.length, 0);
    t.is(error?.code, status.INVALID_ARGUMENT, JSON.stringify(req));
    t.regex(error!.details, message);
  }
});

test('a consumer 1024 events behind gets Lagged{skipped_count}, then the stream continues from the newest', async (t) => {
  // Fast blocks, and a client that stops reading: its small HTTP/2 window fills, the server stops pulling
  // from its subscription, and the subscription's queue passes the spec's 1024.
  const n = await startTestNode({ grpcPort: 0, blockTimeMs: 5 });
  t.teardown(() => n.stop());
  const client = connect(n.node.grpc!.port, undefined, { 'grpc-node.flow_control_window': 4096 });
  t.teardown(() => client.close());
  const stream = client.StreamEvents({});
  stream.on('error', () => undefined); // the cancel at the end
  const events: any[] = [];
  let pausedAt = -1;
  stream.on('data', (e: any) => {
    events.push(e);
    if (pausedAt < 0) {
      pausedAt = Number(e.sequence);
      stream.pause();
    }
  });
  await waitFor(() => pausedAt >= 0, 15_000, 'first event');
  // Well past what the transport buffers (a few hundred events) plus the 1024 the subscription keeps.
  await waitFor(() => n.node.ctx.chain.height >= pausedAt + 1024 + 600, 100_000, 'blocks while the consumer sleeps');
  stream.resume();
  await waitFor(() => events.some((e) => e.event === 'lagged') && events.at(-1).event === 'blockFinalized', 30_000, 'Lagged');
  stream.cancel();
  const lagAt = events.findIndex((e) => e.event === 'lagged');
  const skipped = Number(events[lagAt].lagged.skippedCount);
  t.true(skipped >= 1);
  t.is(events.filter((e) => e.event === 'lagged').length, 1, 'one Lagged for one gap');
  const before = heights(events.slice(0, lagAt));
  const after = heights(events.slice(lagAt + 1));
  t.true(contiguous(before), 'in order up to the gap');
  t.true(contiguous(after), 'in order after the gap');
  t.is(after[0], before.at(-1)! + skipped + 1, 'the gap is exactly skipped_count blocks');
  const text = (await fetch(`${n.url}/metrics`).then((r) => r.text())).match(
    /native_grpc_stream_lagged_events_total\{transport="grpc"\} (\d+)/,
  );
  t.is(Number(text?.[1]), skipped);
});
