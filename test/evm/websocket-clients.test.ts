import test from 'ava';
import { ethers } from 'ethers';
import { type Abi, type Log, createPublicClient, createWalletClient, http, webSocket } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { compiled } from '../helpers/contracts.js';
import { CHAIN_ID, devPrivateKey, viemChain } from '../helpers/evm.js';
import { type TestNode, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

const wsUrl = () => `${n.url.replace('http', 'ws')}/rpc`;
const abi = compiled('Box').abi as Abi;

test("viem webSocket(): watchBlocks delivers consecutive blocks, watchContractEvent delivers a contract's events in order", async (t) => {
  const chain = viemChain(n.url);
  const transport = webSocket(wsUrl());
  const pub = createPublicClient({ chain, transport });
  // viem keeps the socket (and reconnects to it) until its RPC client is closed.
  t.teardown(async () => (await pub.transport.getRpcClient()).close());
  const account = privateKeyToAccount(devPrivateKey(5));
  // Writes go over the same WebSocket.
  const wallet = createWalletClient({ account, chain, transport });
  t.is(await pub.getChainId(), CHAIN_ID);

  const blocks: bigint[] = [];
  const unwatchBlocks = pub.watchBlocks({ onBlock: (b) => void blocks.push(b.number), onError: (e) => t.log(e) });
  t.teardown(unwatchBlocks);
  await waitFor(() => blocks.length >= 4, 30_000, 'four blocks');
  blocks.forEach((b, i) => i > 0 && t.is(b, blocks[i - 1] + 1n));

  const hash = await wallet.deployContract({ abi, bytecode: compiled('Box').bytecode, args: [1n] });
  const rc = await pub.waitForTransactionReceipt({ hash, timeout: 30_000 });
  const address = rc.contractAddress as `0x${string}`;
  const events: Log[] = [];
  const unwatchEvents = pub.watchContractEvent({
    address,
    abi,
    eventName: 'Stored',
    onLogs: (logs) => events.push(...logs),
    onError: (e) => t.log(e),
  });
  t.teardown(unwatchEvents);
  // The subscription is live once eth_subscribe answered; give viem that round trip before writing.
  await waitFor(async () => (await pub.getBlockNumber()) > rc.blockNumber, 30_000);
  const sent: `0x${string}`[] = [];
  for (const v of [11n, 12n, 13n]) sent.push(await wallet.writeContract({ address, abi, functionName: 'store', args: [v] }));
  await waitFor(() => events.length >= 3, 30_000, 'three Stored events');
  t.deepEqual(
    events.map((e) => (e as unknown as { args: { value: bigint } }).args.value),
    [11n, 12n, 13n],
  );
  t.deepEqual(
    events.map((e) => e.transactionHash),
    sent,
  );
  // The same client reads over the WebSocket.
  t.is(await pub.readContract({ address, abi, functionName: 'value' }), 13n);
  // An HTTP client of the same node sees the same head.
  const httpPub = createPublicClient({ chain, transport: http() });
  t.true((await httpPub.getBlockNumber()) >= rc.blockNumber);
});

test("ethers WebSocketProvider: 'block' events, contract events, calls and sends over one socket", async (t) => {
  // cacheTimeout -1: ethers keeps an answer for 250 ms by its timer, and a starved test process fires that timer
  // late, so the deploy's pending nonce (0) would be reused for the next send after the deploy was mined.
  const provider = new ethers.WebSocketProvider(
    wsUrl(),
    { chainId: CHAIN_ID, name: 'native' },
    { staticNetwork: true, cacheTimeout: -1 },
  );
  t.teardown(() => provider.destroy());
  t.is((await provider.getNetwork()).chainId, BigInt(CHAIN_ID));
  const blocks: number[] = [];
  await provider.on('block', (b: number) => blocks.push(b));
  await waitFor(() => blocks.length >= 3, 30_000, 'three block events');
  blocks.forEach((b, i) => i > 0 && t.is(b, blocks[i - 1] + 1));

  const wallet = new ethers.Wallet(devPrivateKey(6), provider);
  const factory = new ethers.ContractFactory(compiled('Box').abi, compiled('Box').bytecode, wallet);
  const box = (await (await factory.deploy(5n)).waitForDeployment()) as ethers.Contract;
  const seen: bigint[] = [];
  await box.on('Stored', (_who: string, value: bigint) => void seen.push(value));
  for (const v of [21n, 22n]) await (await box.store(v)).wait();
  await waitFor(() => seen.length >= 2, 30_000, 'two Stored events');
  t.deepEqual(seen, [21n, 22n]);
  t.is(await box.value(), 22n);
});
