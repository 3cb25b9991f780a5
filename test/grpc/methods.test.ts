/**
 * native.v1 over HTTP/2 with a client built only from the .proto file: every method, every status the
 * service answers with, errors in grpc-status / grpc-message trailers, deadlines, message size limits.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import anyTest, { type TestFn } from 'ava';
import { ethers } from 'ethers';
import { GrpcError, NativeGrpcService } from '../../ts/grpc/index.js';
import { signTransaction } from '../../ts/ledger/index.js';
import { CHAIN_ID, devKey, devPrivateKey } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';
import { type Client, bytesHex, collect, connect, grpc, hexBytes, unary } from './client.js';

const test = anyTest as TestFn<{ n: TestNode; client: Client }>;
const { status } = grpc;

const WINDOW = 4;

test.before(async (t) => {
  // A small window, so blocks outside it are on disk only.
  const n = await startTestNode({ grpcPort: 0, windowSize: WINDOW, blockTimeMs: 100 });
  const client = connect(n.node.grpc!.port);
  t.context = { n, client };
  await waitFor(() => n.node.ctx.chain.height >= WINDOW * 3, 30_000, 'blocks beyond the window');
});

test.after.always(async (t) => {
  t.context.client?.close();
  await t.context.n?.stop();
});

test('the node listens on an ephemeral gRPC port, never the dev default', (t) => {
  const port = t.context.n.node.grpc!.port;
  t.true(port > 0);
  t.not(port, 50051);
});

test('GetBlock by height, hash, latest and finalized; blocks outside the window come from disk', async (t) => {
  const { n, client } = t.context;
  const chain = n.node.ctx.chain;
  t.true(chain.blocks.windowStart > 1, 'block 1 is outside the in-memory window');
  const stored = (await chain.blocks.getBlock(1))!;
  const byHeight = await unary(client, 'GetBlock', { height: { value: '1' } });
  t.falsy(byHeight.error);
  const b = byHeight.value;
  t.is(b.index, '1');
  t.is(bytesHex(b.hash.value), stored.hash);
  t.is(bytesHex(b.parentHash.value), stored.previous_hash);
  t.is(bytesHex(b.stateRoot.value), stored.state_root);
  t.is(b.timestamp, String(stored.timestamp));
  t.is(`0x${bytesHex(b.proposer.value)}`, stored.validator);
  t.is(b.round, stored.round);
  t.is(b.consensus, stored.consensus);
  t.is(b.txCount, stored.tx_count);
  t.is(bytesHex(b.signature), stored.signature);

  const byHash = await unary(client, 'GetBlock', { hash: { value: hexBytes(stored.hash) } });
  t.is(byHash.value.index, '1');
  t.deepEqual(byHash.value.hash, b.hash);

  const genesis = await unary(client, 'GetBlock', { height: { value: '0' } });
  t.is(genesis.value.index, '0');
  t.is(genesis.value.signature.length, 0);

  const before = chain.height;
  const latest = await unary(client, 'GetBlock', { latest: true });
  t.true(Number(latest.value.index) >= before);
  const finalized = await unary(client, 'GetBlock', { finalized: true });
  t.true(Number(finalized.value.index) >= before, 'PoA: every committed block is final');
});

test('GetBlock: NOT_FOUND beyond the head or for an unknown hash; INVALID_ARGUMENT for a bad request', async (t) => {
  const { client } = t.context;
  const ahead = await unary(client, 'GetBlock', { height: { value: '1000000000' } });
  t.is(ahead.error?.code, status.NOT_FOUND);
  t.is(ahead.error?.details, 'block not found');
  const huge = await unary(client, 'GetBlock', { height: { value: '18446744073709551615' } });
  t.is(huge.error?.code, status.NOT_FOUND);
  const unknown = await unary(client, 'GetBlock', { hash: { value: Buffer.alloc(32, 7) } });
  t.is(unknown.error?.code, status.NOT_FOUND);
  const none = await unary(client, 'GetBlock', {});
  t.is(none.error?.code, status.INVALID_ARGUMENT);
  t.regex(none.error!.details, /needs a selector/);
  const short = await unary(client, 'GetBlock', { hash: { value: Buffer.alloc(31) } });
  t.is(short.error?.code, status.INVALID_ARGUMENT);
  t.is(short.error?.details, 'hash must be 32 bytes');
  const notLatest = await unary(client, 'GetBlock', { latest: false });
  t.is(notLatest.error?.code, status.INVALID_ARGUMENT);
});

test('GetBalance: balance in base units and exact wei, pending nonce, the height that answered', async (t) => {
  const { n, client } = t.context;
  const key = devKey(5);
  const rest = await httpJson(`${n.url}/accounts/${key.address}/balance`);
  const r = await unary(client, 'GetBalance', { address: { value: hexBytes(key.address) } });
  t.falsy(r.error);
  t.is(`0x${bytesHex(r.value.address.value)}`, key.address);
  t.is(r.value.balance.base, String(rest.body.balance));
  t.is(BigInt(r.value.balance.wei), BigInt(rest.body.balance) * 10n ** 10n);
  t.is(r.value.nonce, '0');
  t.is(r.value.committedNonce, '0');
  t.true(Number(r.value.height.value) > 0);
  t.is(r.value.storageRoot, null, 'unpopulated, as the spec says');
  t.is(r.value.codeHash, null);

  const fresh = await unary(client, 'GetBalance', { address: { value: Buffer.alloc(20, 0xab) } });
  t.is(fresh.value.balance.base, '0');
  t.is(fresh.value.nonce, '0');
});

test('GetBalance: at_height reads the state after that block; beyond the head NOT_FOUND; bad address INVALID_ARGUMENT', async (t) => {
  const { n, client } = t.context;
  const address = { value: hexBytes(devKey(6).address) };
  // devKey(1) pays fees in later tests: its balance at height 1 is its genesis balance, read from history.
  const payer = { value: hexBytes(devKey(1).address) };
  const old = await unary(client, 'GetBalance', { address: payer, atHeight: { value: '1' } });
  t.is(old.error, undefined);
  t.is(old.value.height.value, '1');
  const rpcOld = await httpJson(`${n.url}/rpc`, {
    method: 'POST',
    json: { jsonrpc: '2.0', id: 1, method: 'eth_getBalance', params: [devKey(1).address, '0x1'] },
  });
  t.is(BigInt(old.value.balance.base) * 10_000_000_000n, BigInt(rpcOld.body.result));
  const ahead = await unary(client, 'GetBalance', { address, atHeight: { value: '99999999' } });
  t.is(ahead.error?.code, status.NOT_FOUND);
  // The head itself is served; retried because a block may land between reading the head and asking.
  const atHead = await waitFor(async () => {
    const h = n.node.ctx.chain.height;
    const r = await unary(client, 'GetBalance', { address, atHeight: { value: String(h) } });
    return r.value ? { r, h } : null;
  });
  t.is(atHead.r.value.height.value, String(atHead.h));
  const bad = await unary(client, 'GetBalance', { address: { value: Buffer.alloc(19) } });
  t.is(bad.error?.code, status.INVALID_ARGUMENT);
  t.is(bad.error?.details, 'address must be 20 bytes');
  const missing = await unary(client, 'GetBalance', {});
  t.is(missing.error?.code, status.INVALID_ARGUMENT);
});

test('GetBalance: at_height older than the history the node keeps (--history N) is FAILED_PRECONDITION', async (t) => {
  const n = await startTestNode({ grpcPort: 0, blockTimeMs: 50, history: { kind: 'recent', blocks: 3 } });
  t.teardown(() => n.stop());
  const client = connect(n.node.grpc!.port);
  t.teardown(() => client.close());
  await waitFor(() => n.node.ctx.chain.height >= 8, 30_000, 'blocks beyond the kept history');
  const r = await unary(client, 'GetBalance', { address: { value: hexBytes(devKey(6).address) }, atHeight: { value: '1' } });
  t.is(r.error?.code, status.FAILED_PRECONDITION);
  t.regex(r.error!.details, /^historical state is not available for block 1: the oldest available block is \d+$/);
});

test.serial('BroadcastTx: a native SignedTransaction is admitted, counted in the pending nonce and included', async (t) => {
  const { n, client } = t.context;
  const from = devKey(1);
  const to = devKey(2).address;
  const tx = signTransaction({ from: from.address, to, amount: 12_345n, fee: 10_000n, nonce: 0n, chain_id: CHAIN_ID }, from);
  const r = await unary(client, 'BroadcastTx', {
    signedTransaction: {
      txid: { value: hexBytes(tx.txid) },
      from: { value: hexBytes(tx.from_address) },
      to: { value: hexBytes(tx.to_address) },
      amount: { base: String(tx.amount) },
      fee: { base: String(tx.fee) },
      nonce: '0',
      data: tx.data,
      timestamp: String(tx.timestamp),
      chainId: tx.chain_id,
      signature: hexBytes(tx.signature),
      publicKey: hexBytes(tx.public_key),
    },
  });
  t.falsy(r.error, r.error?.details);
  t.is(bytesHex(r.value.txid.value), tx.txid);
  // Pending nonce right away (unless the block already took it: then the committed nonce says so).
  const acct = await unary(client, 'GetBalance', { address: { value: hexBytes(from.address) } });
  t.is(acct.value.nonce, '1');
  await waitFor(() => n.node.ctx.chain.blocks.txLocation(tx.txid), 15_000, 'inclusion');
  const after = await unary(client, 'GetBalance', { address: { value: hexBytes(from.address) } });
  t.is(after.value.committedNonce, '1');

  const replay = await unary(client, 'BroadcastTx', {
    signedTransaction: {
      txid: { value: hexBytes(tx.txid) },
      from: { value: hexBytes(tx.from_address) },
      to: { value: hexBytes(tx.to_address) },
      amount: { base: String(tx.amount) },
      fee: { base: String(tx.fee) },
      nonce: '0',
      data: tx.data,
      timestamp: String(tx.timestamp),
      chainId: tx.chain_id,
      signature: hexBytes(tx.signature),
      publicKey: hexBytes(tx.public_key),
    },
  });
  t.is(replay.error?.code, status.INVALID_ARGUMENT);
  t.regex(replay.error!.details, /nonce/i);
  t.is(replay.error?.metadata.get('native-reject-reason')[0], 'nonce');
});

test.serial(
  'BroadcastTx: a raw Ethereum transaction goes through eth_sendRawTransaction admission; txid is its hash',
  async (t) => {
    const { n, client } = t.context;
    const w = new ethers.Wallet(devPrivateKey(3));
    const raw = await w.signTransaction({
      type: 2,
      chainId: CHAIN_ID,
      nonce: 0,
      to: devKey(4).address,
      value: 10n ** 15n,
      gasLimit: 21_000n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
    const r = await unary(client, 'BroadcastTx', { rawEthereumTx: hexBytes(raw) });
    t.falsy(r.error, r.error?.details);
    t.is(`0x${bytesHex(r.value.txid.value)}`, ethers.keccak256(raw));
    await waitFor(() => n.node.ctx.chain.blocks.txLocation(bytesHex(r.value.txid.value)), 15_000, 'inclusion');
    // The same raw bytes inside a Transaction message are submitted the same way.
    const again = await unary(client, 'BroadcastTx', { signedTransaction: { raw: hexBytes(raw) } });
    t.is(again.error?.code, status.INVALID_ARGUMENT);
    t.regex(again.error!.details, /nonce/i);
  },
);

test("BroadcastTx: malformed input is INVALID_ARGUMENT with admission's words", async (t) => {
  const { client } = t.context;
  const empty = await unary(client, 'BroadcastTx', {});
  t.is(empty.error?.code, status.INVALID_ARGUMENT);
  t.is(empty.error?.details, 'BroadcastTxRequest needs raw_ethereum_tx or signed_transaction');
  const garbage = await unary(client, 'BroadcastTx', { rawEthereumTx: Buffer.from('c0ffee', 'hex') });
  t.is(garbage.error?.code, status.INVALID_ARGUMENT);
  const emptyRaw = await unary(client, 'BroadcastTx', { rawEthereumTx: Buffer.alloc(0) });
  t.is(emptyRaw.error?.code, status.INVALID_ARGUMENT);
  const shape = await unary(client, 'BroadcastTx', { signedTransaction: { nonce: '1' } });
  t.is(shape.error?.code, status.INVALID_ARGUMENT);
  t.regex(shape.error!.details, /^Invalid transaction: /);
  const from = devKey(7);
  const tx = signTransaction(
    { from: from.address, to: from.address, amount: 1n, fee: 10_000n, nonce: 0n, chain_id: CHAIN_ID },
    from,
  );
  const forged = await unary(client, 'BroadcastTx', {
    signedTransaction: {
      txid: { value: hexBytes(tx.txid) },
      from: { value: hexBytes(tx.from_address) },
      to: { value: hexBytes(tx.to_address) },
      amount: { base: '2' },
      fee: { base: String(tx.fee) },
      nonce: '0',
      timestamp: String(tx.timestamp),
      chainId: tx.chain_id,
      signature: hexBytes(tx.signature),
      publicKey: hexBytes(tx.public_key),
    },
  });
  t.is(forged.error?.code, status.INVALID_ARGUMENT);
  t.truthy(forged.error?.metadata.get('native-reject-reason')[0]);
});

test('UNIMPLEMENTED for a method the service does not have; RESOURCE_EXHAUSTED for an oversized request', async (t) => {
  const { client } = t.context;
  const unknown = await new Promise<grpc.ServiceError>((resolve) =>
    client.makeUnaryRequest(
      '/native.v1.Native/GetNothing',
      (b: Buffer) => b,
      (b: Buffer) => b,
      Buffer.alloc(0),
      (err: grpc.ServiceError | null) => resolve(err!),
    ),
  );
  t.is(unknown.code, status.UNIMPLEMENTED);
  const big = await unary(client, 'BroadcastTx', { rawEthereumTx: Buffer.alloc(2 * 1024 * 1024, 1) });
  t.is(big.error?.code, status.RESOURCE_EXHAUSTED);
});

test.serial('deadlines: an expired deadline is DEADLINE_EXCEEDED, and a stream with a deadline ends with it', async (t) => {
  const { n, client } = t.context;
  const r = await unary(client, 'GetBlock', { latest: true }, { deadlineMs: -1 });
  t.is(r.error?.code, status.DEADLINE_EXCEEDED);
  const stream = client.StreamEvents({}, { deadline: Date.now() + 600 });
  const { events, error } = await collect(stream, () => false);
  t.is(error?.code, status.DEADLINE_EXCEEDED);
  t.true(events.length >= 1, 'blocks arrived before the deadline');
  // The server let go of the subscription.
  await waitFor(() => n.node.ctx.events!.listenerCount === 0, 5_000, 'subscription closed');
});

test.serial('a cancelled stream releases its subscription', async (t) => {
  const { n, client } = t.context;
  const feed = n.node.ctx.events!;
  const base = feed.listenerCount;
  const stream = client.StreamEvents({});
  const { events, error } = await collect(stream, (e) => e.length >= 2);
  t.falsy(error);
  t.is(events.length, 2);
  await waitFor(() => feed.listenerCount === base, 5_000, 'subscription closed after cancel');
  t.pass();
});

test('metrics: calls by method and status, latency, active streams', async (t) => {
  const { n, client } = t.context;
  await unary(client, 'GetBlock', { latest: true });
  await unary(client, 'GetBlock', { height: { value: '999999999' } });
  const text = (await httpJson(`${n.url}/metrics`)).text;
  t.regex(text, /native_grpc_calls_total\{method="GetBlock",code="OK",transport="grpc"\} \d+/);
  t.regex(text, /native_grpc_calls_total\{method="GetBlock",code="NOT_FOUND",transport="grpc"\} \d+/);
  t.regex(text, /native_grpc_call_duration_seconds_bucket\{le="0.1",method="GetBlock",transport="grpc"\} \d+/);
  t.regex(text, /# TYPE native_grpc_active_streams gauge/);
});

test('TLS and reflection: a TLS node answers a client that trusts its certificate; reflection is off unless asked', async (t) => {
  const dir = fileURLToPath(new URL('../../../test/fixtures/grpc-tls/', import.meta.url));
  const n = await startTestNode({
    grpcPort: 0,
    grpcTlsCert: `${dir}cert.pem`,
    grpcTlsKey: `${dir}key.pem`,
    grpcReflection: true,
    blockTimeMs: 60_000,
  });
  t.teardown(() => n.stop());
  t.true(n.node.grpc!.tls);
  const tls = connect(n.node.grpc!.port, grpc.credentials.createSsl(readFileSync(`${dir}cert.pem`)), {
    'grpc.ssl_target_name_override': 'localhost',
  });
  t.teardown(() => tls.close());
  const r = await unary(tls, 'GetBlock', { height: { value: '0' } });
  t.falsy(r.error, r.error?.details);
  t.is(r.value.index, '0');
  // A plaintext client cannot talk to it.
  const plain = connect(n.node.grpc!.port);
  t.teardown(() => plain.close());
  const refused = await unary(plain, 'GetBlock', { latest: true }, { deadlineMs: 5_000 });
  t.truthy(refused.error);

  // Reflection on this node lists the service; on the shared (default) node the path is unknown.
  const listServices = (client: grpc.Client) =>
    new Promise<{ names?: string[]; code?: number }>((resolve) => {
      const call = client.makeBidiStreamRequest(
        '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo',
        (b: Buffer) => b,
        (b: Buffer) => b,
      );
      call.on('data', (b: Buffer) => resolve({ names: [b.toString('latin1')] }));
      call.on('error', (err: grpc.ServiceError) => resolve({ code: err.code }));
      // ServerReflectionRequest { list_services (7) = "" }
      call.write(Buffer.from([0x3a, 0x00]));
      call.end();
    });
  const on = await listServices(tls);
  t.true(on.names?.[0].includes('native.v1.Native'));
  const off = await listServices(t.context.client);
  t.is(off.code, status.UNIMPLEMENTED);
});

test.serial('the open-stream cap answers RESOURCE_EXHAUSTED and frees its slot when a stream ends', async (t) => {
  const service = new NativeGrpcService(t.context.n.node.ctx, { maxStreams: 1 });
  const method = service.method('/native.v1.Native/StreamEvents');
  if (method?.kind !== 'server_streaming') throw new Error('StreamEvents is a server-streaming method');
  const sink = { write: () => true, drained: async () => undefined };
  const ac = new AbortController();
  const first = service.stream(method, new Uint8Array(0), { signal: ac.signal }, sink, 'grpc');
  t.is(service.streamCount, 1);
  const refused = await t.throwsAsync(
    service.stream(method, new Uint8Array(0), { signal: new AbortController().signal }, sink, 'grpc'),
  );
  t.true(refused instanceof GrpcError);
  t.is((refused as GrpcError).code, status.RESOURCE_EXHAUSTED);
  ac.abort();
  await first;
  t.is(service.streamCount, 0);
});
