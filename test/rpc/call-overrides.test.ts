import test from 'ava';
import { ethers } from 'ethers';
import { type Hex, decodeFunctionResult, pad, sha256, toHex } from 'viem';
import { compiled } from '../helpers/contracts.js';
import { WAIT, deployEnvProbe, devClients, probeAbi as abi, probeData as data } from '../helpers/env-probe.js';
import { ethersProvider, rpc } from '../helpers/evm.js';
import { type TestNode, startTestNode } from '../helpers/node.js';

// Every call runs in a call worker (no inline first try) and every trace in a trace worker: the overrides
// travel to the threads. Tests run concurrently, each with its own dev account.
let n: TestNode;
let probe: `0x${string}`;
test.before(async () => {
  n = await startTestNode({ rpcEvmInlineMs: 0 });
  probe = await deployEnvProbe(n.url);
});
test.after.always(() => n?.stop());

const FRESH = '0x00000000000000000000000000000000c0ffee01' as const;
const POOR = '0x00000000000000000000000000000000000b0b01' as const;
const clients = (i: number) => devClients(n.url, i);
const decode = (functionName: string, out: Hex | undefined): any =>
  decodeFunctionResult({ abi: abi(), functionName, data: out ?? '0x' });

test('viem call with stateOverride: code at a fresh address, balance, state (replace all) and stateDiff', async (t) => {
  const c = clients(1);
  const code = compiled('EnvProbe').deployedBytecode;
  // Code and storage on an address that has neither.
  const fresh = await c.pub.call({
    to: FRESH,
    data: data('a'),
    stateOverride: [{ address: FRESH, code, state: [{ slot: pad('0x0'), value: pad('0x2a') }] }],
  });
  t.is(decode('a', fresh.data), 42n);
  const balance = await c.pub.call({
    to: probe,
    data: data('balanceOf', [POOR]),
    stateOverride: [{ address: POOR, balance: 123_456n }],
  });
  t.is(decode('balanceOf', balance.data), 123_456n);

  // The deployed probe with a = 1, b = 2 in its storage.
  const hash = await c.wallet.writeContract({ address: probe, abi: abi(), functionName: 'set', args: [1n, 2n] });
  await c.pub.waitForTransactionReceipt({ hash, ...WAIT });
  const read = async (slot: 'a' | 'b', override: object) =>
    decode(slot, (await c.pub.call({ to: probe, data: data(slot), stateOverride: [{ address: probe, ...override }] })).data);
  const five = [{ slot: pad('0x0'), value: pad('0x5') }];
  t.is(await read('a', { state: five }), 5n);
  t.is(await read('b', { state: five }), 0n, 'state replaces the whole storage');
  t.is(await read('a', { stateDiff: five }), 5n);
  t.is(await read('b', { stateDiff: five }), 2n, 'stateDiff keeps the other slots');
  // Nothing stays behind.
  t.is(await c.pub.readContract({ address: probe, abi: abi(), functionName: 'b' }), 2n);
});

test('viem call with blockOverrides: number, time, gas limit, fee recipient, prevRandao, base fee, blob base fee', async (t) => {
  const c = clients(2);
  const out = await c.pub.call({
    to: probe,
    data: data('env'),
    blockOverrides: {
      number: 1_000_000n,
      time: 2_000_000_000n,
      gasLimit: 12_345_678n,
      feeRecipient: FRESH,
      prevRandao: 0xabcdefn,
      baseFeePerGas: 7n,
      blobBaseFee: 9n,
    },
  });
  const [number, time, gasLimit, coinbase, randao, baseFee, blobBaseFee] = decode('env', out.data);
  t.is(number, 1_000_000n);
  t.is(time, 2_000_000_000n);
  t.is(gasLimit, 12_345_678n);
  t.is(coinbase.toLowerCase(), FRESH);
  t.is(randao, 0xabcdefn);
  t.is(baseFee, 7n);
  t.is(blobBaseFee, 9n);
  // Without overrides: the chain's own environment.
  const [plainNumber, , plainLimit, , , plainBaseFee] = decode('env', (await c.pub.call({ to: probe, data: data('env') })).data);
  t.true(plainNumber < 1_000_000n);
  t.is(plainLimit, 30_000_000n);
  t.is(plainBaseFee, 1_000_000_000n);
});

test('fee fields: GASPRICE, the balance check and the gas bought before the call runs', async (t) => {
  const provider = ethersProvider(n.url);
  const from = clients(6).account.address;
  const call = (obj: object, overrides?: object) =>
    rpc(n.url, 'eth_call', overrides ? [{ from, ...obj }, 'latest', overrides] : [{ from, ...obj }, 'latest']);
  const price = (r: { result?: string }) => decode('env', r.result as Hex)[7] as bigint;
  t.is(price(await call({ to: probe, data: data('env'), gasPrice: '0x3b9aca07' })), 1_000_000_007n);
  // EIP-1559: base fee (1 gwei) + tip, capped at the fee cap.
  t.is(
    price(await call({ to: probe, data: data('env'), maxFeePerGas: '0x77359400', maxPriorityFeePerGas: '0x5' })),
    1_000_000_005n,
  );
  t.is(
    price(await call({ to: probe, data: data('env'), maxFeePerGas: '0x3b9aca01', maxPriorityFeePerGas: '0x5' })),
    1_000_000_001n,
  );
  t.is(price(await call({ to: probe, data: data('env') })), 0n, 'no fee fields: price 0');

  // The caller must hold gas x fee cap; the call sees its balance minus gas x price.
  const poor = await call({ from: POOR, to: probe, data: data('env'), gas: '0x186a0', gasPrice: '0x3b9aca00' });
  t.is(poor.error?.code, -32000);
  t.regex(
    poor.error?.message ?? '',
    new RegExp(`^insufficient funds for gas \\* price \\+ value: address ${POOR} have 0 want 100000000000000$`, 'i'),
  );
  const funded = await call(
    { from: POOR, to: probe, data: data('balanceOf', [POOR]), gas: '0x186a0', gasPrice: '0x3b9aca00' },
    { [POOR]: { balance: toHex(10n ** 18n) } },
  );
  t.is(decode('balanceOf', funded.result as Hex), 10n ** 18n - 100_000n * 1_000_000_000n);
  const lowCap = await call({ from: POOR, to: probe, data: data('env'), maxFeePerGas: '0x1', maxPriorityFeePerGas: '0x0' });
  t.regex(
    lowCap.error?.message ?? '',
    new RegExp(`^max fee per gas less than block base fee: address ${POOR}, maxFeePerGas: 1, baseFee: 1000000000$`, 'i'),
  );
  const otherChain = await call({ to: probe, data: data('env'), chainId: '0x1' });
  t.is(otherChain.error?.code, -32000);
  t.is(otherChain.error?.message, "chainId does not match node's (have=1, want=7120)");
  t.is(
    price(await call({ to: probe, data: data('env'), chainId: '0x1bd0', gasPrice: '0x3b9aca00' })),
    1_000_000_000n,
    'its own chain id is fine',
  );
  const tipAbove = await call({ to: probe, data: data('env'), maxFeePerGas: '0x3b9aca00', maxPriorityFeePerGas: '0x3b9aca01' });
  t.regex(tipAbove.error?.message ?? '', /^max priority fee per gas higher than max fee per gas/);
  // ethers: estimateGas with a price, over an account a state override funds.
  const est = await provider.send('eth_estimateGas', [
    { from: POOR, to: probe, data: data('addCredit', [POOR, 1n]), gasPrice: '0x3b9aca00' },
    'latest',
    { [POOR]: { balance: toHex(10n ** 18n) } },
  ]);
  t.true(BigInt(est) > 21_000n, "an exact estimate (the dev chain has no 100,000 floor)");
  const tooPoor = await rpc(n.url, 'eth_estimateGas', [
    { from: POOR, to: probe, data: data('addCredit', [POOR, 1n]), gasPrice: '0x3b9aca00' },
    'latest',
    { [POOR]: { balance: toHex(30_000n * 1_000_000_000n) } },
  ]);
  t.is(tooPoor.error?.message, 'gas required exceeds allowance (30000)');
});

test('movePrecompileToAddress: sha256 answers at its new address, the old one runs the code it is given', async (t) => {
  const c = clients(3);
  const SHA256 = '0x0000000000000000000000000000000000000002';
  const input = toHex('abc');
  const run = async (target: string, stateOverride?: any) =>
    decode('callRaw', (await c.pub.call({ to: probe, data: data('callRaw', [target, input]), stateOverride })).data);
  t.deepEqual(await run(SHA256), [true, sha256(input)]);
  const moved = { [SHA256]: { movePrecompileToAddress: FRESH } };
  const viaRpc = await rpc(n.url, 'eth_call', [{ to: probe, data: data('callRaw', [FRESH, input]) }, 'latest', moved]);
  t.deepEqual(decode('callRaw', viaRpc.result as Hex), [true, sha256(input)]);
  const old = await rpc(n.url, 'eth_call', [{ to: probe, data: data('callRaw', [SHA256, input]) }, 'latest', moved]);
  t.deepEqual(decode('callRaw', old.result as Hex), [true, '0x'], 'no precompile and no code left at 0x02');
  // A precompile address given code runs that code (geth drops the precompile).
  const replaced = await run(SHA256, [{ address: SHA256, code: compiled('EnvProbe').deployedBytecode }]);
  t.deepEqual(replaced, [false, '0x'], 'EnvProbe has no function for "abc" and reverts');
  const notPrecompile = await rpc(n.url, 'eth_call', [
    { to: probe, data: data('a') },
    'latest',
    { [FRESH]: { movePrecompileToAddress: POOR } },
  ]);
  t.is(notPrecompile.error?.message, `account ${FRESH} is not a precompile`);
});

test('eth_createAccessList and eth_estimateGas with state overrides; eth_call at a past block with overrides', async (t) => {
  const c = clients(4);
  const code = compiled('EnvProbe').deployedBytecode;
  const list = await rpc(n.url, 'eth_createAccessList', [
    { from: c.account.address, to: probe, data: data('callRaw', [FRESH, '0x']) },
    'latest',
    { [FRESH]: { code } },
  ]);
  t.deepEqual(
    list.result.accessList.map((e: any) => e.address),
    [FRESH],
  );
  const estimate = await rpc(n.url, 'eth_estimateGas', [
    { from: c.account.address, to: FRESH, data: data('set', [3n, 4n]) },
    'latest',
    { [FRESH]: { code } },
  ]);
  t.true(BigInt(estimate.result) > 40_000n, 'two fresh slots written');
  // viem's estimateGas with a stateOverride: the value moved needs the balance the override gives.
  const pay = { account: POOR, to: probe, data: data('pay', [FRESH]), value: 10n ** 18n } as const;
  const withBalance = await c.pub.estimateGas({ ...pay, stateOverride: [{ address: POOR, balance: 2n * 10n ** 18n }] });
  t.true(withBalance > 30_000n);
  await t.throwsAsync(c.pub.estimateGas(pay), { message: /insufficient funds/i });
  // History: the state after an earlier block, with an override on top.
  const h1 = await c.wallet.writeContract({ address: probe, abi: abi(), functionName: 'addCredit', args: [FRESH, 10n] });
  const rc1 = await c.pub.waitForTransactionReceipt({ hash: h1, ...WAIT });
  const h2 = await c.wallet.writeContract({ address: probe, abi: abi(), functionName: 'addCredit', args: [FRESH, 5n] });
  await c.pub.waitForTransactionReceipt({ hash: h2, ...WAIT });
  t.is(await c.pub.readContract({ address: probe, abi: abi(), functionName: 'credit', args: [FRESH] }), 15n);
  const past = await c.pub.call({
    to: probe,
    data: data('balanceOf', [FRESH]),
    blockNumber: rc1.blockNumber,
    stateOverride: [{ address: FRESH, balance: 77n }],
  });
  t.is(decode('balanceOf', past.data), 77n);
  const pastCredit = await c.pub.readContract({
    address: probe,
    abi: abi(),
    functionName: 'credit',
    args: [FRESH],
    blockNumber: rc1.blockNumber,
  });
  t.is(pastCredit, 10n);
});

test('debug_traceCall takes tracer, tracerConfig, stateOverrides and blockOverrides in its options (ethers)', async (t) => {
  const provider = ethersProvider(n.url);
  const c = clients(5);
  const call = { from: c.account.address, to: probe, data: data('env') };
  const traced = await provider.send('debug_traceCall', [
    call,
    'latest',
    {
      tracer: 'callTracer',
      tracerConfig: { onlyTopCall: true },
      blockOverrides: { number: '0x4d2', baseFeePerGas: '0x3' },
      stateOverrides: {},
    },
  ]);
  const [number, , , , , baseFee] = decode('env', traced.output);
  t.is(number, 1234n);
  t.is(baseFee, 3n);
  // Fee fields in a traced call: the price the code sees, the base fee of the overridden block under it.
  const priced = await provider.send('debug_traceCall', [
    { ...call, maxFeePerGas: '0x64', maxPriorityFeePerGas: '0x5' },
    'latest',
    { tracer: 'callTracer', blockOverrides: { baseFeePerGas: '0x3' } },
  ]);
  t.is(decode('env', priced.output)[7], 8n);
  const tooLow = await rpc(n.url, 'debug_traceCall', [
    { ...call, maxFeePerGas: '0x2' },
    'latest',
    { tracer: 'callTracer', blockOverrides: { baseFeePerGas: '0x3' } },
  ]);
  t.regex(tooLow.error?.message ?? '', /^max fee per gas less than block base fee/);
  // eth_estimateGas takes block overrides too.
  const gas = await provider.send('eth_estimateGas', [call, 'latest', {}, { number: '0x4d2' }]);
  t.true(BigInt(gas) > 21_000n);
  const pre = await provider.send('debug_traceCall', [
    { from: POOR, to: probe, data: data('balanceOf', [POOR]) },
    'latest',
    { tracer: 'prestateTracer', stateOverrides: { [POOR]: { balance: '0x1234', nonce: '0x7' } } },
  ]);
  t.is(pre[POOR].balance, '0x1234');
  t.is(pre[POOR].nonce, 7);
  // Struct logs with a code override: the overridden code runs.
  const logs = await provider.send('debug_traceCall', [
    { to: FRESH, data: '0x' },
    'latest',
    { stateOverrides: { [FRESH]: { code: '0x6001600155' } }, disableStack: true },
  ]);
  t.deepEqual(
    logs.structLogs.map((s: any) => s.op),
    ['PUSH1', 'PUSH1', 'SSTORE'],
  );
});

test('wrong shapes answer -32602 naming the field; geth refusals answer -32000', async (t) => {
  const call = { to: probe, data: data('a') };
  const cases: [unknown[], RegExp][] = [
    [
      [call, 'latest', { [POOR]: { balance: '0x01' } }],
      /invalid argument 2: 0x0+b0b01: balance: hex number with leading zero digits/,
    ],
    [[call, 'latest', { [POOR]: { nonce: '0x10000000000000000' } }], /nonce: hex number > 64 bits/],
    [[call, 'latest', { [POOR]: { code: '0x123' } }], /code: must be 0x-prefixed hex bytes/],
    [[call, 'latest', { [POOR]: { stateDif: {} } }], /unknown field stateDif/],
    [[call, 'latest', { [POOR]: { state: { '0xzz': '0x1' } } }], /state slot 0xzz/],
    [[call, 'latest', { '0x1234': {} }], /0x1234 is not an address/],
    [[call, 'latest', [1]], /state overrides must be an object/],
    [[call, 'latest', {}, { gasLimit: 'ten' }], /invalid argument 3: gasLimit: hex string without 0x prefix/],
    [[call, 'latest', {}, { feeRecipient: '0x12' }], /invalid argument 3: feeRecipient: address must be/],
    [[call, 'latest', {}, { numbr: '0x1' }], /unknown block override numbr/],
    [[call, 'latest', {}, { beaconRoot: pad('0x1') }], /block override "beaconRoot" is not supported for this RPC method/],
    [[{ ...call, gasPrice: '0x1', maxFeePerGas: '0x2' }], /both gasPrice and \(maxFeePerGas or maxPriorityFeePerGas\) specified/],
    [[{ ...call, maxFeePerGas: '1x' }], /invalid argument 0: maxFeePerGas/],
  ];
  for (const [params, message] of cases) {
    const r = await rpc(n.url, 'eth_call', params);
    t.is(r.error?.code, -32602, JSON.stringify(params).slice(0, 200));
    t.regex(r.error?.message ?? '', message);
  }
  const both = await rpc(n.url, 'eth_call', [call, 'latest', { [POOR]: { state: {}, stateDiff: {} } }]);
  t.is(both.error?.code, -32000);
  t.is(both.error?.message, `account ${POOR} has both 'state' and 'stateDiff'`);
  const trace = await rpc(n.url, 'debug_traceCall', [call, 'latest', { stateOverrides: { [POOR]: { balance: 'x' } } }]);
  t.is(trace.error?.code, -32602);
  t.regex(trace.error?.message ?? '', /stateOverrides: 0x0+b0b01: balance/);
  const access = await rpc(n.url, 'eth_createAccessList', [call, 'latest', {}, {}]);
  t.is(access.error?.code, -32602, 'eth_createAccessList takes no block overrides (geth)');
  t.true(ethers.isHexString((await rpc(n.url, 'eth_call', [call, 'latest', null, null])).result));
});
