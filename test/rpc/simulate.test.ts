import test from 'ava';
import { type Hex, decodeFunctionResult, pad, parseEther, toHex } from 'viem';
import { WAIT, deployEnvProbe, devClients, probeAbi as abi, probeData as data } from '../helpers/env-probe.js';
import { ethersProvider, rpc } from '../helpers/evm.js';
import { type TestNode, startTestNode } from '../helpers/node.js';

// Simulations run in a call worker (no inline first try). Tests run concurrently, each with its own account.
let n: TestNode;
let probe: `0x${string}`;
test.before(async () => {
  n = await startTestNode({ rpcEvmInlineMs: 0 });
  probe = await deployEnvProbe(n.url);
});
test.after.always(() => n?.stop());

const FRESH = '0x00000000000000000000000000000000c0ffee02' as const;
const POOR = '0x00000000000000000000000000000000000b0b02' as const;
const ERC7528 = '0xeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';
const TRANSFER_TOPIC = '0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const clients = (i: number) => devClients(n.url, i);

test('viem simulateCalls: a payment and a contract call in order, traceTransfers logs the native transfers (ERC-7528)', async (t) => {
  const c = clients(1);
  const { results } = await c.pub.simulateCalls({
    account: c.account.address,
    traceTransfers: true,
    calls: [
      { to: FRESH, value: parseEther('1') },
      { to: probe, abi: abi(), functionName: 'pay', args: [POOR], value: 5n },
      { to: probe, abi: abi(), functionName: 'balanceOf', args: [FRESH] },
      { to: probe, abi: abi(), functionName: 'fail', args: ['nope'] },
    ],
  });
  t.deepEqual(
    results.map((r) => r.status),
    ['success', 'success', 'success', 'failure'],
  );
  const [send, pay, balance, failed] = results;
  t.is(send.logs?.length, 1);
  t.is(send.logs?.[0].address.toLowerCase(), ERC7528);
  t.deepEqual(send.logs?.[0].topics, [TRANSFER_TOPIC, pad(c.account.address.toLowerCase() as Hex), pad(FRESH)]);
  t.is(BigInt(send.logs?.[0].data as Hex), parseEther('1'));
  // pay(): the call's value to the probe, its Paid event, then the probe's forward to POOR, in that order.
  t.deepEqual(
    pay.logs?.map((l) => l.address.toLowerCase()),
    [ERC7528, probe.toLowerCase(), ERC7528],
  );
  t.deepEqual(pay.logs?.[2].topics.slice(1), [pad(probe.toLowerCase() as Hex), pad(POOR)]);
  t.is(balance.result, parseEther('1'), 'the state the first call left');
  t.true(failed.error !== undefined);
  t.regex(String(failed.error?.message), /nope/);
  t.true(balance.gasUsed > 21_000n);
  // A SELFDESTRUCT sends the contract's whole balance: a transfer log too (code: PUSH20 FRESH SELFDESTRUCT).
  const BOOM = '0x00000000000000000000000000000000000b00a2' as const;
  const [destroyed] = (
    await c.pub.simulateCalls({
      account: c.account.address,
      traceTransfers: true,
      stateOverrides: [{ address: BOOM, code: `0x73${FRESH.slice(2)}ff`, balance: 777n }],
      calls: [{ to: BOOM }],
    })
  ).results;
  t.deepEqual(
    destroyed.logs?.map((l) => [l.address.toLowerCase(), l.topics[1], l.topics[2], BigInt(l.data)]),
    [[ERC7528, pad(BOOM), pad(FRESH), 777n]],
  );
});

test('viem simulateBlocks: state carries across blocks, block and state overrides per block, hashes chain', async (t) => {
  const c = clients(2);
  const head = await c.pub.getBlock();
  const blocks = await c.pub.simulateBlocks({
    blockNumber: head.number,
    blocks: [
      {
        stateOverrides: [{ address: POOR, balance: parseEther('2') }],
        calls: [
          { account: POOR, to: probe, abi: abi(), functionName: 'set', args: [7n, 8n] },
          { to: probe, abi: abi(), functionName: 'balanceOf', args: [POOR] },
        ],
      },
      {
        blockOverrides: { number: head.number + 2n, time: head.timestamp + 1000n, feeRecipient: FRESH, baseFeePerGas: 3n },
        calls: [
          { to: probe, abi: abi(), functionName: 'a' },
          { to: probe, abi: abi(), functionName: 'env' },
        ],
      },
    ],
  });
  t.deepEqual(
    blocks.map((b) => b.number),
    [head.number + 1n, head.number + 2n],
  );
  t.deepEqual(
    blocks.map((b) => b.timestamp),
    [head.timestamp + 12n, head.timestamp + 1000n],
  );
  t.is(blocks[0].parentHash, head.hash as Hex);
  t.is(blocks[1].parentHash, blocks[0].hash as Hex);
  t.is(blocks[0].baseFeePerGas, 0n, 'no validation: base fee 0 unless overridden');
  t.is(blocks[0].calls[1].result, parseEther('2'));
  const last = blocks[1];
  t.is(last.calls[0].result, 7n, 'the first block wrote a = 7');
  const env = last.calls[1].result as readonly unknown[];
  t.is(env[0], head.number + 2n);
  t.is(env[1], head.timestamp + 1000n);
  t.is((env[3] as string).toLowerCase(), FRESH);
  t.is(env[5], 3n);
  t.is(last.miner.toLowerCase(), FRESH);
  t.is(last.gasUsed, last.calls[0].gasUsed + last.calls[1].gasUsed);
  // A gap in numbers is filled with empty blocks 12 s apart (geth; viem pairs results with its blocks, so raw).
  const gap = await rpc(n.url, 'eth_simulateV1', [
    { blockStateCalls: [{ blockOverrides: { number: toHex(head.number + 3n) }, calls: [{ to: probe, data: data('a') }] }] },
    toHex(head.number),
  ]);
  t.deepEqual(
    gap.result.map((b: any) => [BigInt(b.number) - head.number, BigInt(b.timestamp) - head.timestamp, b.calls.length]),
    [
      [1n, 12n, 0],
      [2n, 24n, 0],
      [3n, 36n, 1],
    ],
  );
  // Nothing was written to the chain.
  t.is(await c.pub.readContract({ address: probe, abi: abi(), functionName: 'a' }), 0n);
});

test('raw eth_simulateV1 (ethers): returnFullTransactions, revert data, validation with fees and nonces, at a past block', async (t) => {
  const provider = ethersProvider(n.url);
  const c = clients(3);
  const from = c.account.address.toLowerCase();
  const nonce = await c.pub.getTransactionCount({ address: c.account.address });
  const out = await provider.send('eth_simulateV1', [
    {
      blockStateCalls: [
        {
          calls: [
            { from, to: probe, data: data('addCredit', [FRESH, 3n]), maxFeePerGas: '0x77359400', maxPriorityFeePerGas: '0x2' },
            { from, to: probe, data: data('fail', ['why']), maxFeePerGas: '0x77359400' },
          ],
        },
      ],
      validation: true,
      returnFullTransactions: true,
    },
    'latest',
  ]);
  t.is(out.length, 1);
  const [ok, reverted] = out[0].calls;
  t.is(ok.status, '0x1');
  t.true(BigInt(ok.maxUsedGas) >= BigInt(ok.gasUsed), 'maxUsedGas: the gas before refunds');
  t.is(ok.logs.length, 0);
  t.is(reverted.status, '0x0');
  t.is(reverted.error.code, 3);
  t.is(reverted.error.message, 'execution reverted: why');
  t.true(reverted.error.data.startsWith('0x08c379a0'));
  t.is(out[0].baseFeePerGas, '0x3b9aca00', 'validation: the chain base fee');
  const txs = out[0].transactions;
  t.is(txs[0].from, from);
  t.is(txs[0].nonce, toHex(nonce));
  t.is(txs[1].nonce, toHex(nonce + 1), 'the nonce moves from call to call');
  t.is(txs[0].gasPrice, toHex(1_000_000_002n));
  t.is(txs[0].hash.length, 66);
  // At a past block: the state after it.
  const h = await c.wallet.writeContract({ address: probe, abi: abi(), functionName: 'addCredit', args: [FRESH, 4n] });
  const rc = await c.pub.waitForTransactionReceipt({ hash: h, ...WAIT });
  const h2 = await c.wallet.writeContract({ address: probe, abi: abi(), functionName: 'addCredit', args: [FRESH, 6n] });
  await c.pub.waitForTransactionReceipt({ hash: h2, ...WAIT });
  const past = await provider.send('eth_simulateV1', [
    { blockStateCalls: [{ calls: [{ to: probe, data: data('credit', [FRESH]) }] }] },
    toHex(rc.blockNumber),
  ]);
  t.is(past[0].number, toHex(rc.blockNumber + 1n));
  t.is(
    decodeFunctionResult({ abi: abi(), functionName: 'credit', data: past[0].calls[0].returnData }),
    await c.pub.readContract({ address: probe, abi: abi(), functionName: 'credit', args: [FRESH], blockNumber: rc.blockNumber }),
  );
});

test("geth's error codes: validation failures, block order, limits, wrong shapes", async (t) => {
  const c = clients(4);
  const from = c.account.address.toLowerCase();
  const sim = (opts: object, ref: unknown = 'latest') => rpc(n.url, 'eth_simulateV1', [opts, ref]);
  const one = (call: object, extra: object = {}) => ({ blockStateCalls: [{ calls: [call] }], ...extra });
  const cases: [object, number, RegExp][] = [
    [one({ from, to: probe }, { validation: true }), -32602, /^max fee per gas less than block base fee/],
    [one({ from, to: probe, nonce: '0x3e8', maxFeePerGas: '0x77359400' }, { validation: true }), -38011, /^nonce too high/],
    [one({ from: POOR, to: probe, gasPrice: '0x1' }), -38014, /^insufficient funds for gas \* price \+ value/],
    [one({ from, to: probe, gas: '0x1c9c381' }), -38015, /^block gas limit reached: remaining: 30000000, required: 30000001$/],
    [one({ from, to: probe, gas: '0x5208', data: '0x01' }), -38013, /^intrinsic gas too low: have 21000, want 21016$/],
    [{ blockStateCalls: [{ blockOverrides: { number: '0x1' } }] }, -38020, /^block numbers must be in order/],
    [{ blockStateCalls: [{ blockOverrides: { time: '0x1' } }] }, -38021, /^block timestamps must be in order/],
    [{ blockStateCalls: [{ blockOverrides: { number: '0x100000' } }] }, -38026, /^too many blocks$/],
    [{ blockStateCalls: Array.from({ length: 257 }, () => ({})) }, -38026, /^too many blocks$/],
    [{ blockStateCalls: [] }, -32602, /^empty input$/],
    [{ blockStateCalls: [{ calls: [{ to: '0x12' }] }] }, -32602, /blockStateCalls\[0\]\.calls\[0\]: to must be/],
    [
      { blockStateCalls: [{ stateOverrides: { [POOR]: { balance: 'x' } } }] },
      -32602,
      /blockStateCalls\[0\]\.stateOverrides: .*balance/,
    ],
    [{ blockStateCalls: [{ blockOverrides: { gasLimit: '0x01' } }] }, -32602, /blockStateCalls\[0\]\.blockOverrides: gasLimit/],
    [{ blockStateCalls: [{ cals: [] }] }, -32602, /unknown field cals/],
    [{ blockStateCalls: [{}], validaton: true }, -32602, /unknown field validaton/],
    [{ blockStateCalls: [{}], validation: 'yes' }, -32602, /validation must be a boolean/],
  ];
  for (const [opts, code, message] of cases) {
    const r = await sim(opts);
    t.is(r.error?.code, code, JSON.stringify(opts).slice(0, 160));
    t.regex(r.error?.message ?? '', message);
  }
  // A state override set geth refuses; an EVM failure in a call is that call's error (-32015), not the request's.
  const both = await sim({ blockStateCalls: [{ stateOverrides: { [POOR]: { state: {}, stateDiff: {} } } }] });
  t.is(both.error?.code, -32000);
  const oog = await sim(one({ from, to: probe, data: data('set', [1n, 2n]), gas: '0x6000' }));
  t.is(oog.result[0].calls[0].status, '0x0');
  t.deepEqual(oog.result[0].calls[0].error, { code: -32015, message: 'out of gas' });
});

test('limits: the RPC gas cap is one budget for all calls, the EVM timeout bounds the whole simulation', async (t) => {
  const LOOP = '0x5b600056'; // JUMPDEST PUSH1 0 JUMP: runs until its gas or its time is up
  const looping = (calls: number) => ({
    blockStateCalls: [
      { stateOverrides: { [FRESH]: { code: LOOP } }, calls: Array.from({ length: calls }, () => ({ to: FRESH })) },
    ],
  });
  const capped = await startTestNode({ rpcEvmInlineMs: 0, rpcGasCap: 300_000n });
  try {
    const one = await rpc(capped.url, 'eth_simulateV1', [looping(1), 'latest']);
    const [call] = one.result[0].calls;
    t.is(call.gasUsed, '0x493e0', 'the call gets the whole budget');
    t.deepEqual(call.error, {
      code: -32015,
      message: "out of gas (gas limit was capped by the RPC server's global gas cap)",
    });
    // The second call has no gas left (geth answers the same).
    const two = await rpc(capped.url, 'eth_simulateV1', [looping(2), 'latest']);
    t.is(two.error?.code, -38013);
    t.is(two.error?.message, 'intrinsic gas too low: have 0, want 21000');
  } finally {
    await capped.stop();
  }
  const slow = await startTestNode({ rpcEvmInlineMs: 0, rpcGasCap: 0n, rpcEvmTimeoutMs: 1500 });
  try {
    const t0 = Date.now();
    // Ten blocks of one looping call each: on osaka a call gets at most EIP-7825's 2^24 gas, which one loop may
    // burn within the limit; ten of them cannot, so the time limit ends the simulation.
    const tenBlocks = {
      blockStateCalls: Array.from({ length: 10 }, (_, i) => ({
        ...(i === 0 ? { stateOverrides: { [FRESH]: { code: LOOP } } } : {}),
        calls: [{ to: FRESH }],
      })),
    };
    const r = await rpc(slow.url, 'eth_simulateV1', [tenBlocks, 'latest']);
    t.is(r.error?.code, -32000);
    t.is(r.error?.message, 'execution aborted (timeout = 1.5s)');
    t.true(Date.now() - t0 < 10_000);
  } finally {
    await slow.stop();
  }
});
