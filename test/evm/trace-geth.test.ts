/**
 * callTracer and prestateTracer output in geth's shape, field for field (eth/tracers/native/call.go,
 * prestate.go): which fields a frame or account carries and which it leaves out (omitempty), frame
 * addresses of DELEGATECALL and CALLCODE, calls that fail before running, geth's error texts and revert
 * reasons, log indexes and positions, and the diffMode rules. Contracts: test/fixtures/contracts/GethTrace.sol.
 */
import anyTest, { type TestFn } from 'ava';
import { ethers } from 'ethers';
import { devPatchKey } from '../../ts/chain/index.js';
import { compiled } from '../helpers/contracts.js';
import { CHAIN_ID, errorStringData, ethersWallet, rpc, rpcOk, waitReceipt } from '../helpers/evm.js';
import { type TestNode, startTestNode } from '../helpers/node.js';

interface Ctx {
  n: TestNode;
  w: ethers.Wallet;
  /** The wallet's next nonce (an object: ava gives each test a shallow copy of the context). */
  seq: { nonce: number };
  logic: string;
  logic2: string;
  proxy: string;
  cases: string;
}

const test = anyTest as TestFn<Ctx>;
const iface = (name: 'Logic' | 'Proxy' | 'Cases') => new ethers.Interface(compiled(name).abi);
const logicI = iface('Logic');
const proxyI = iface('Proxy');
const casesI = iface('Cases');
const word = (n: bigint | number): string => ethers.zeroPadValue(ethers.toBeHex(n), 32);
const keys = (o: object): string[] => Object.keys(o).sort();
/** Cases is deployed with this balance (wei). */
const CASES_BALANCE = 1000n;

function sign(c: Ctx, to: string | null, data: string, opts: { value?: bigint; gas?: bigint } = {}): Promise<string> {
  return c.w.signTransaction({
    type: 2,
    chainId: BigInt(CHAIN_ID),
    to,
    data,
    nonce: c.seq.nonce++,
    gasLimit: opts.gas ?? 3_000_000n,
    value: opts.value ?? 0n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
}

async function send(c: Ctx, to: string | null, data: string, opts: { value?: bigint; gas?: bigint } = {}) {
  const hash: string = await rpcOk(c.n.url, 'eth_sendRawTransaction', [await sign(c, to, data, opts)]);
  const receipt = await waitReceipt(c.n.url, hash);
  return { hash, receipt };
}

const trace = (c: Ctx, hash: string, options: unknown) => rpcOk(c.n.url, 'debug_traceTransaction', [hash, options]);
const callTrace = (c: Ctx, hash: string, tracerConfig: object = {}) => trace(c, hash, { tracer: 'callTracer', tracerConfig });

test.before(async (t) => {
  const n = await startTestNode({ blockTimeMs: 0 });
  const c: Ctx = { n, w: ethersWallet(n.url, 2), seq: { nonce: 0 }, logic: '', logic2: '', proxy: '', cases: '' };
  const deploy = async (data: string, value = 0n) => (await send(c, null, data, { value })).receipt.contractAddress as string;
  c.logic = await deploy(compiled('Logic').bytecode);
  c.logic2 = await deploy(compiled('Logic').bytecode);
  c.proxy = await deploy(compiled('Proxy').bytecode + ethers.AbiCoder.defaultAbiCoder().encode(['address'], [c.logic]).slice(2));
  c.cases = await deploy(compiled('Cases').bytecode, CASES_BALANCE);
  t.context = c;
});

test.after.always(async (t) => {
  await t.context.n?.stop();
});

test.serial('DELEGATECALL and CALLCODE frames: from is the running contract, to the code called; value as geth', async (t) => {
  const c = t.context;
  const { hash } = await send(c, c.proxy, proxyI.encodeFunctionData('viaDelegate', [5n]), { value: 3n });
  const tr = await callTrace(c, hash);
  t.like(tr, { type: 'CALL', from: c.w.address.toLowerCase(), to: c.proxy, value: '0x3', output: word(6) });
  t.is(tr.calls.length, 1);
  const d = tr.calls[0];
  t.deepEqual(keys(d), ['from', 'gas', 'gasUsed', 'input', 'output', 'to', 'type', 'value']);
  // DELEGATECALL carries the value of the frame it runs in (geth passes the parent's value on).
  t.like(d, {
    type: 'DELEGATECALL',
    from: c.proxy,
    to: c.logic,
    value: '0x3',
    input: logicI.encodeFunctionData('store', [5n]),
    output: word(6),
  });

  // Proxy -DELEGATECALL-> Logic.forward -DELEGATECALL-> Logic2.store: the second hop still runs as the proxy.
  const chain = await callTrace(c, (await send(c, c.proxy, proxyI.encodeFunctionData('chain', [c.logic2, 9n]))).hash);
  t.like(chain.calls[0], { type: 'DELEGATECALL', from: c.proxy, to: c.logic, value: '0x0' });
  t.like(chain.calls[0].calls[0], { type: 'DELEGATECALL', from: c.proxy, to: c.logic2, value: '0x0', output: word(10) });
  t.is(chain.calls[0].calls[0].calls, undefined);

  const code = await callTrace(c, (await send(c, c.proxy, proxyI.encodeFunctionData('viaCallcode', [4n]))).hash);
  t.deepEqual(keys(code.calls[0]), ['from', 'gas', 'gasUsed', 'input', 'output', 'to', 'type', 'value']);
  t.like(code.calls[0], { type: 'CALLCODE', from: c.proxy, to: c.logic, value: '0x0', output: word(5) });
  // It ran in the proxy's storage: the frame's `from` is where it ran.
  t.is(BigInt(await rpcOk(c.n.url, 'eth_getStorageAt', [c.proxy, '0x0', 'latest'])), 4n);
});

test.serial('a CALL whose value is above the balance fails before running: a frame with geth error, no gas used', async (t) => {
  const c = t.context;
  const target = ethers.Wallet.createRandom().address.toLowerCase();
  const value = 10n ** 18n;
  const tr = await callTrace(c, (await send(c, c.cases, casesI.encodeFunctionData('instafail', [target, value]))).hash);
  t.is(tr.output, word(0));
  t.is(tr.calls.length, 1);
  const f = tr.calls[0];
  t.deepEqual(keys(f), ['error', 'from', 'gas', 'gasUsed', 'input', 'to', 'type', 'value']);
  t.like(f, {
    type: 'CALL',
    from: c.cases,
    to: target,
    value: ethers.toQuantity(value),
    gasUsed: '0x0',
    input: '0x',
    error: 'insufficient balance for transfer',
  });
  // The gas the call was given: the caller's all-but-one-64th plus the value stipend.
  t.true(BigInt(f.gas) > 2300n && BigInt(f.gas) < BigInt(tr.gas));
  // `send` passes no gas of its own: the frame has the stipend alone (geth's inner_instafail fixture: 0x8fc).
  const viaSend = await callTrace(c, (await send(c, c.cases, casesI.encodeFunctionData('instafailSend', [target, value]))).hash);
  t.like(viaSend.calls[0], { type: 'CALL', gas: '0x8fc', gasUsed: '0x0', error: 'insufficient balance for transfer' });
});

test.serial('failed CREATE2: reverted constructor and address collision clear `to`; a successful one keeps it', async (t) => {
  const c = t.context;
  const tr = await callTrace(c, (await send(c, c.cases, casesI.encodeFunctionData('failedCreate2'))).hash);
  t.deepEqual(
    tr.calls.map((f: any) => f.type),
    ['CREATE2', 'CREATE2', 'CREATE2'],
  );
  const [reverted, made, collided] = tr.calls;
  t.deepEqual(keys(reverted), ['error', 'from', 'gas', 'gasUsed', 'input', 'output', 'revertReason', 'type', 'value']);
  t.like(reverted, {
    from: c.cases,
    value: '0x0',
    error: 'execution reverted',
    revertReason: 'no deploy',
    output: errorStringData('no deploy'),
  });
  const salt2 = word(2);
  t.is(made.to, ethers.getCreate2Address(c.cases, salt2, ethers.keccak256(made.input)).toLowerCase());
  t.is(made.output, compiled('Reverter').deployedBytecode);
  t.deepEqual(keys(collided), ['error', 'from', 'gas', 'gasUsed', 'input', 'type', 'value']);
  t.like(collided, { error: 'contract address collision', gasUsed: collided.gas });
});

test.serial(
  'reverts: Error(string) and Panic(uint256) decoded as geth; custom errors and empty reverts carry no reason',
  async (t) => {
    const c = t.context;
    const tr = await callTrace(c, (await send(c, c.cases, casesI.encodeFunctionData('reverts'))).hash);
    t.is(tr.calls.length, 6);
    for (const f of tr.calls) t.like(f, { type: 'STATICCALL', from: c.cases, to: c.cases });
    const [reason, overflow, assertion, custom, empty, invalid] = tr.calls;
    t.like(reason, { error: 'execution reverted', revertReason: 'reason here', output: errorStringData('reason here') });
    const panic = (code: number) => `0x4e487b71${word(code).slice(2)}`;
    t.like(overflow, { error: 'execution reverted', revertReason: 'arithmetic underflow or overflow', output: panic(0x11) });
    t.like(assertion, { error: 'execution reverted', revertReason: 'assert(false)', output: panic(1) });
    t.deepEqual(keys(custom), ['error', 'from', 'gas', 'gasUsed', 'input', 'output', 'to', 'type']);
    t.is(custom.output, new ethers.Interface(['error Custom(uint256)']).encodeErrorResult('Custom', [7n]));
    t.deepEqual(keys(empty), ['error', 'from', 'gas', 'gasUsed', 'input', 'to', 'type']);
    t.is(empty.error, 'execution reverted');
    t.deepEqual(keys(invalid), ['error', 'from', 'gas', 'gasUsed', 'input', 'to', 'type']);
    t.like(invalid, { error: 'invalid opcode: INVALID', gasUsed: invalid.gas });

    // The transaction's own revert, in the top frame.
    const top = await callTrace(c, (await send(c, c.cases, casesI.encodeFunctionData('reason'), { gas: 100_000n })).hash);
    t.like(top, { type: 'CALL', to: c.cases, error: 'execution reverted', revertReason: 'reason here' });
    t.is(top.calls, undefined);
  },
);

test.serial(
  'geth error texts: invalid jump, stack underflow and overflow, undefined opcode, return data, code storage',
  async (t) => {
    const c = t.context;
    const cases: [string, string][] = [
      ['600056', 'invalid jump destination'],
      ['01', 'stack underflow (0 <=> 2)'],
      ['0c', 'invalid opcode: opcode 0xc not defined'],
      ['5b5f600056', 'stack limit reached 1024 (1023)'],
      // RETURNDATACOPY of a byte with no return data
      ['60015f5f3e', 'return data out of bounds'],
    ];
    for (const [code, error] of cases) {
      const tr = await callTrace(c, (await send(c, c.cases, casesI.encodeFunctionData('runRaw', [`0x${code}`]))).hash);
      const [create, call] = tr.calls;
      t.like(create, { type: 'CREATE', from: c.cases, output: `0x${code}`, value: '0x0' }, code);
      t.deepEqual(keys(call), ['error', 'from', 'gas', 'gasUsed', 'input', 'to', 'type', 'value'], code);
      t.like(call, { type: 'CALL', from: c.cases, to: create.to, input: '0x', error, gasUsed: call.gas }, code);
    }
    // CREATE with 1 wei from a contract holding none, as the code's last op: a frame with the error, no `to`.
    const poor = await callTrace(c, (await send(c, c.cases, casesI.encodeFunctionData('runRaw', ['0x5f5f6001f0']))).hash);
    const [, run] = poor.calls;
    t.is(run.error, undefined);
    t.is(run.calls.length, 1);
    t.deepEqual(keys(run.calls[0]), ['error', 'from', 'gas', 'gasUsed', 'input', 'type', 'value']);
    t.like(run.calls[0], {
      type: 'CREATE',
      from: run.to,
      value: '0x1',
      gasUsed: '0x0',
      input: '0x',
      error: 'insufficient balance for transfer',
    });
    // A creation that returns 100 bytes without the 20,000 gas to store them.
    const { hash, receipt } = await send(c, null, '0x60646000f3', { gas: 60_000n });
    const top = await callTrace(c, hash);
    t.deepEqual(keys(top), ['error', 'from', 'gas', 'gasUsed', 'input', 'type', 'value']);
    t.like(top, {
      type: 'CREATE',
      gas: '0xea60',
      gasUsed: receipt.gasUsed,
      input: '0x60646000f3',
      error: 'contract creation code storage out of gas',
    });
  },
);

test.serial('withLog: logs carry their index in the block and position among calls; reverted frames lose theirs', async (t) => {
  const c = t.context;
  const mark = casesI.getEvent('Mark')!.topicHash;
  const { hash, receipt } = await send(c, c.cases, casesI.encodeFunctionData('logs'));
  const tr = await callTrace(c, hash, { withLog: true });
  const log = (n: number, index: number, position: number) => ({
    address: c.cases,
    topics: [mark],
    data: word(n),
    index: ethers.toQuantity(index),
    position: ethers.toQuantity(position),
  });
  t.deepEqual(tr.logs, [log(1, 0, 0), log(5, 2, 2)]);
  t.deepEqual(keys(tr.calls[0]), [
    'calls',
    'error',
    'from',
    'gas',
    'gasUsed',
    'input',
    'output',
    'revertReason',
    'to',
    'type',
    'value',
  ]);
  t.is(tr.calls[0].revertReason, 'undone');
  t.is(tr.calls[0].calls[0].logs, undefined);
  t.deepEqual(tr.calls[1].logs, [log(4, 1, 0)]);
  t.deepEqual(
    receipt.logs.map((l: any) => [l.data, Number(l.logIndex)]),
    [
      [word(1), 0],
      [word(4), 1],
      [word(5), 2],
    ],
  );

  // Two transactions in one block: the second one's logs are numbered after the first one's.
  await rpcOk(c.n.url, 'evm_setAutomine', [false]);
  const raw = () => sign(c, c.cases, casesI.encodeFunctionData('logs'), { gas: 1_000_000n });
  const first = await rpcOk(c.n.url, 'eth_sendRawTransaction', [await raw()]);
  const second = await rpcOk(c.n.url, 'eth_sendRawTransaction', [await raw()]);
  await rpcOk(c.n.url, 'evm_mine', []);
  await rpcOk(c.n.url, 'evm_setAutomine', [true]);
  const r2 = await waitReceipt(c.n.url, second);
  t.is(r2.blockNumber, (await waitReceipt(c.n.url, first)).blockNumber);
  const tr2 = await callTrace(c, second, { withLog: true });
  t.deepEqual(
    [tr2.logs[0].index, tr2.calls[1].logs[0].index, tr2.logs[1].index],
    r2.logs.map((l: any) => l.logIndex),
  );
  t.is(tr2.logs[0].index, '0x3');
  const block = await rpcOk(c.n.url, 'debug_traceBlockByNumber', [
    r2.blockNumber,
    { tracer: 'callTracer', tracerConfig: { withLog: true } },
  ]);
  t.deepEqual(block[1].result, tr2);
  t.deepEqual(block[0].result.logs, tr.logs);
});

test.serial('precompiles: frames with their gas cost as gasUsed and their output; none when empty', async (t) => {
  const c = t.context;
  const data = casesI.encodeFunctionData('precompiles');
  const tr = await callTrace(c, (await send(c, c.cases, data)).hash);
  const [signer] = casesI.decodeFunctionResult(
    'precompiles',
    await rpcOk(c.n.url, 'eth_call', [{ to: c.cases, data }, 'latest']),
  );
  const pre = (n: number) => `0x${n.toString(16).padStart(40, '0')}`;
  t.deepEqual(
    tr.calls.map((f: any) => [f.type, f.from, f.to]),
    [
      ['STATICCALL', c.cases, pre(1)],
      ['STATICCALL', c.cases, pre(2)],
      ['STATICCALL', c.cases, pre(4)],
    ],
  );
  const [ecrecover, sha, identity] = tr.calls;
  t.is(ecrecover.gasUsed, '0xbb8');
  t.is(ecrecover.output === undefined, signer === ethers.ZeroAddress);
  t.like(sha, { gasUsed: '0x48', output: ethers.sha256(ethers.toUtf8Bytes('abc')) });
  t.like(identity, {
    gasUsed: '0x12',
    input: ethers.hexlify(ethers.toUtf8Bytes('copy me')),
    output: ethers.hexlify(ethers.toUtf8Bytes('copy me')),
  });
});

test.serial(
  'prestateTracer: codeHash, storage, disableCode/disableStorage, created accounts left out unless includeEmpty',
  async (t) => {
    const c = t.context;
    const sender = c.w.address.toLowerCase();
    const x = BigInt(await rpcOk(c.n.url, 'eth_getStorageAt', [c.proxy, '0x0', 'latest']));
    const { hash } = await send(c, c.proxy, proxyI.encodeFunctionData('viaDelegate', [7n]));
    const pre = await trace(c, hash, { tracer: 'prestateTracer' });
    t.deepEqual(keys(pre), [sender, c.proxy, c.logic].sort());
    const proxyCode = await rpcOk(c.n.url, 'eth_getCode', [c.proxy, 'latest']);
    t.deepEqual(pre[c.proxy], {
      balance: '0x3',
      code: proxyCode,
      codeHash: ethers.keccak256(proxyCode),
      nonce: 1,
      storage: { [word(0)]: word(x), [word(1)]: word(BigInt(c.logic)) },
    });
    const logicCode = await rpcOk(c.n.url, 'eth_getCode', [c.logic, 'latest']);
    t.deepEqual(pre[c.logic], { balance: '0x0', code: logicCode, codeHash: ethers.keccak256(logicCode), nonce: 1 });
    t.deepEqual(keys(pre[sender]), ['balance', 'nonce']);

    const noCode = await trace(c, hash, { tracer: 'prestateTracer', tracerConfig: { disableCode: true, disableStorage: true } });
    t.deepEqual(noCode[c.proxy], { balance: '0x3', codeHash: ethers.keccak256(proxyCode), nonce: 1 });

    // A contract the transaction creates was empty before it: left out, unless includeEmpty.
    const raw = await send(c, c.cases, casesI.encodeFunctionData('runRaw', ['0x600056']));
    const created = (await callTrace(c, raw.hash)).calls[0].to;
    const without = await trace(c, raw.hash, { tracer: 'prestateTracer' });
    t.deepEqual(keys(without), [sender, c.cases].sort());
    const withEmpty = await trace(c, raw.hash, { tracer: 'prestateTracer', tracerConfig: { includeEmpty: true } });
    t.deepEqual(withEmpty[created], { balance: '0x0' });
    const deployed = await send(c, null, compiled('Logic').bytecode);
    t.deepEqual(keys(await trace(c, deployed.hash, { tracer: 'prestateTracer' })), [sender]);

    const refused = await rpc(c.n.url, 'debug_traceTransaction', [
      hash,
      { tracer: 'prestateTracer', tracerConfig: { diffMode: true, includeEmpty: true } },
    ]);
    t.is(refused.error?.code, -32602);
    t.regex(JSON.stringify(refused.error), /cannot use diffMode with includeEmpty/);
  },
);

test.serial(
  'prestateTracer diffMode: only changed fields in post, cleared storage absent from post, creations and deletions',
  async (t) => {
    const c = t.context;
    const sender = c.w.address.toLowerCase();
    const x = BigInt(await rpcOk(c.n.url, 'eth_getStorageAt', [c.proxy, '0x0', 'latest']));
    t.not(x, 0n);
    // Slot 0 set to zero, no value moved: the proxy changed only in storage, so its post entry is empty.
    const cleared = await send(c, c.proxy, proxyI.encodeFunctionData('viaDelegate', [0n]));
    const d = await trace(c, cleared.hash, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } });
    t.deepEqual(keys(d.pre), [sender, c.proxy].sort());
    t.deepEqual(d.pre[c.proxy].storage, { [word(0)]: word(x) });
    t.deepEqual(d.post[c.proxy], {});
    t.deepEqual(keys(d.post), [sender, c.proxy].sort());
    t.deepEqual(keys(d.post[sender]), ['balance', 'nonce']);

    // A creation: the new account in post only (code, codeHash, nonce), the creator's nonce in post.
    const raw = await send(c, c.cases, casesI.encodeFunctionData('runRaw', ['0x600056']));
    const created = (await callTrace(c, raw.hash)).calls[0].to;
    const cd = await trace(c, raw.hash, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } });
    t.is(cd.pre[created], undefined);
    t.deepEqual(cd.post[created], { code: '0x600056', codeHash: ethers.keccak256('0x600056'), nonce: 1 });
    t.deepEqual(cd.post[c.cases], { nonce: cd.pre[c.cases].nonce + 1 });

    // SELFDESTRUCT of a contract older than the transaction (EIP-6780): not deleted, its balance moves.
    const to = ethers.Wallet.createRandom().address.toLowerCase();
    const balance = BigInt(await rpcOk(c.n.url, 'eth_getBalance', [c.cases, 'latest']));
    const sd = await send(c, c.cases, casesI.encodeFunctionData('destroy', [to]));
    const tr = await callTrace(c, sd.hash);
    t.deepEqual(tr.calls, [
      { type: 'SELFDESTRUCT', from: c.cases, to, value: ethers.toQuantity(balance), gas: '0x0', gasUsed: '0x0', input: '0x' },
    ]);
    const sdd = await trace(c, sd.hash, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } });
    t.deepEqual(sdd.post[c.cases], { balance: '0x0' });
    t.deepEqual(sdd.post[to], { balance: ethers.toQuantity(balance) });
    t.is(sdd.pre[to], undefined);
  },
);

test.serial('a transaction mined with the dev writes it depends on is traced on them', async (t) => {
  const c = t.context;
  const key = ethers.Wallet.createRandom();
  const from = key.address.toLowerCase();
  const funds = 10n ** 18n;
  t.true(await rpcOk(c.n.url, 'anvil_setBalance', [from, ethers.toQuantity(funds)]));
  t.true(await rpcOk(c.n.url, 'hardhat_setStorageAt', [c.proxy, '0x0', word(42)]));
  const raw = await key.signTransaction({
    type: 2,
    chainId: BigInt(CHAIN_ID),
    to: c.proxy,
    data: proxyI.encodeFunctionData('viaDelegate', [8n]),
    nonce: 0,
    gasLimit: 200_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  const hash = await rpcOk(c.n.url, 'eth_sendRawTransaction', [raw]);
  await waitReceipt(c.n.url, hash);
  const tr = await callTrace(c, hash);
  t.like(tr, { from, to: c.proxy, output: word(9) });
  const pre = await trace(c, hash, { tracer: 'prestateTracer' });
  t.is(pre[from].balance, ethers.toQuantity(funds));
  t.is(pre[c.proxy].storage[word(0)], word(42));
  const logs = await trace(c, hash, {});
  t.false(logs.failed);

  // Without the block's record (removed from the database) the sender has nothing: the trace fails, and
  // says why instead of a bare -32603 "internal error".
  const receipt = await waitReceipt(c.n.url, hash);
  await c.n.node.core.chain.blocks.db.write([{ type: 'del', key: devPatchKey(Number(receipt.blockNumber)) }]);
  const failed = await rpc(c.n.url, 'debug_traceTransaction', [hash, { tracer: 'callTracer' }]);
  t.is(failed.error?.code, -32000);
  t.regex(failed.error?.message ?? '', /^trace failed: .*(balance|funds)/i);
});
