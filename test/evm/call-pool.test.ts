import test from 'ava';
import { ethers } from 'ethers';
import type { CallPool } from '../../ts/execution/index.js';
import { parseConfig } from '../../ts/node/index.js';
import { compiled } from '../helpers/contracts.js';
import { ethersWallet, headHeight, rpc, rpcOk, signCall, waitReceipt } from '../helpers/evm.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

// Serial: each test loads call workers with long-running calls; in parallel they would starve each other.

/** Init code of a contract creation that never returns: JUMPDEST PUSH1 0 JUMP (12 gas per round). */
const LOOP = '0x5b600056';
const loopCall = (gas?: bigint) => [{ data: LOOP, ...(gas ? { gas: ethers.toQuantity(gas) } : {}) }, 'latest'];

test.serial('eight looping eth_calls: /health keeps answering and a block still comes every second', async (t) => {
  const n = await startTestNode({ blockTimeMs: 1000, rpcEvmTimeoutMs: 4000 });
  t.teardown(() => n.stop());
  const h0 = await headHeight(n.url);
  const t0 = Date.now();
  let running = true;
  const calls = Promise.all(Array.from({ length: 8 }, () => rpc(n.url, 'eth_call', loopCall()))).finally(() => {
    running = false;
  });
  // Back-to-back probes while the calls run (before call workers, one call held the event loop ~1.5 s
  // and eight froze /health for ~11 s).
  let probes = 0;
  let slowest = 0;
  while (running) {
    const s = performance.now();
    const r = await httpJson(`${n.url}/health`);
    slowest = Math.max(slowest, performance.now() - s);
    t.is(r.status, 200);
    probes++;
  }
  const replies = await calls;
  const elapsedS = (Date.now() - t0) / 1000;
  const produced = (await headHeight(n.url)) - h0;
  t.log(`${probes} health probes in ${elapsedS.toFixed(1)} s, slowest ${slowest.toFixed(0)} ms; ${produced} blocks`);
  for (const r of replies) {
    // Each call ends by running out of its 50M gas or by the 4 s time limit (queueing included).
    t.is(r.error?.code, -32000);
    t.regex(r.error?.message ?? '', /^(out of gas|execution aborted \(timeout = 4s\))$/);
  }
  t.true(elapsedS >= 3, 'the calls ran for seconds');
  // The point is "keeps answering", not a latency figure (no time is asserted: a shared machine's load decides
  // those): with the calls on the event loop, /health answered once or twice and no block came until they ended.
  t.true(probes >= 3, `${probes} health probes answered while the calls ran`);
  t.true(produced >= 1, `${produced} blocks in ${elapsedS.toFixed(1)} s`);
});

test.serial('a call past --rpc-evmtimeout answers -32000 "execution aborted (timeout = 300ms)"; estimateGas too', async (t) => {
  const n = await startTestNode({ rpcGasCap: 0n, rpcEvmTimeoutMs: 300 });
  t.teardown(() => n.stop());
  for (const method of ['eth_call', 'eth_estimateGas']) {
    const r = await rpc(n.url, method, method === 'eth_call' ? loopCall() : [{ data: LOOP }]);
    t.deepEqual(r.error, { code: -32000, message: 'execution aborted (timeout = 300ms)' }, method);
  }
  // The pool keeps serving: a replacement worker answers (its first call may itself pass 300 ms while it
  // loads the EVM on a loaded machine, so ask until one comes back in time).
  const served = await waitFor(
    async () => (await rpc(n.url, 'eth_call', [{ data: '0x600160005260206000f3' }, 'latest'])).result ?? null,
    30_000,
    'the pool serving again',
  );
  t.is(served, ethers.toBeHex(1n, 32));
});

test.serial('a saturated call pool answers -32005 at once; the node and the pool recover', async (t) => {
  // Inline off: on --dev each call would first hold the main thread for up to 100 ms, which staggers their
  // arrival at the pool by seconds on a loaded machine (the first could time out before the last arrives).
  const n = await startTestNode({ rpcGasCap: 0n, rpcEvmTimeoutMs: 1500, rpcEvmWorkers: 1, rpcEvmQueue: 1, rpcEvmInlineMs: 0 });
  t.teardown(() => n.stop());
  // The dev chain's background warm-up sends its own calls through the same pool: let it finish first, so
  // the pool's one worker and one queue slot are the test's alone.
  await n.node.devWarmUp;
  // …and until the pool has released its last slot (a warm-up call's answer can reach its caller before the
  // pool's own bookkeeping of that call ends).
  const pool = n.node.ctx.evmCalls as CallPool;
  await waitFor(() => pool.pending === 0, 30_000, 'the call pool idle after the warm-up');
  const replies = await Promise.all(Array.from({ length: 5 }, () => rpc(n.url, 'eth_call', loopCall())));
  const busy = replies.filter((r) => r.error?.code === -32005);
  const timedOut = replies.filter((r) => r.error?.message === 'execution aborted (timeout = 1.5s)');
  t.is(busy.length + timedOut.length, 5);
  // One runs and one waits; the other three find the pool full.
  t.is(busy.length, 3, `busy ${busy.length}, timed out ${timedOut.length}, pool pending at the end ${pool.pending}`);
  t.regex(busy[0].error?.message ?? '', /too many EVM calls in progress \(2 running or queued\)/);
  t.is(await rpcOk(n.url, 'eth_call', [{ data: '0x600160005260206000f3' }, 'latest']), ethers.toBeHex(1n, 32));
});

test.serial(
  '--rpc-evm-inline (dev default 100 ms): short calls answer on the main thread, a long one moves to a worker',
  async (t) => {
    t.is(parseConfig(['--dev'], {}).rpcEvmInlineMs, 100);
    // A budget no short call passes even on a loaded machine: the calls stay on the main thread.
    const roomy = await startTestNode({ rpcEvmInlineMs: 20_000 });
    t.teardown(() => roomy.stop());
    const RETURN_ONE = '0x600160005260206000f3';
    t.is(await rpcOk(roomy.url, 'eth_call', [{ data: RETURN_ONE }, 'latest']), ethers.toBeHex(1n, 32));
    t.true(BigInt(await rpcOk(roomy.url, 'eth_estimateGas', [{ data: RETURN_ONE }])) > 21_000n);
    t.is((roomy.node.ctx.evmCalls as CallPool).threads.length, 0, 'no call worker started for short calls');
    // An endless loop passes the inline 100 ms, starts over on a worker and ends there at the time limit.
    const n = await startTestNode({ rpcGasCap: 0n, rpcEvmTimeoutMs: 3000, rpcEvmInlineMs: 100 });
    t.teardown(() => n.stop());
    const pool = n.node.ctx.evmCalls as CallPool;
    t.deepEqual((await rpc(n.url, 'eth_call', loopCall())).error, { code: -32000, message: 'execution aborted (timeout = 3s)' });
    t.true(pool.threads.length > 0, 'the loop ran on a worker');
    // Off: every call goes to the workers (the default outside --dev).
    const off = await startTestNode({ rpcEvmInlineMs: 0 });
    t.teardown(() => off.stop());
    t.is(await rpcOk(off.url, 'eth_call', [{ data: RETURN_ONE }, 'latest']), ethers.toBeHex(1n, 32));
    t.true((off.node.ctx.evmCalls as CallPool).threads.length > 0);
  },
);

test.serial('--rpc-gascap bounds eth_call gas and the top of the estimate search', async (t) => {
  const n = await startTestNode({ rpcGasCap: 100_000n });
  t.teardown(() => n.stop());
  // Asked for 30M, given 100k: out of gas at once rather than after seconds.
  t.deepEqual((await rpc(n.url, 'eth_call', loopCall(30_000_000n))).error, { code: -32000, message: 'out of gas' });
  t.deepEqual((await rpc(n.url, 'eth_estimateGas', [{ data: LOOP }])).error, {
    code: -32000,
    message: 'gas required exceeds allowance (100000)',
  });
});

test.serial('a call reads one state from start to end while blocks change it', async (t) => {
  // A long time limit: under a full test run the (nice +10) worker shares the cores with other test processes.
  const n = await startTestNode({ rpcEvmTimeoutMs: 60_000 });
  t.teardown(() => n.stop());
  const w = ethersWallet(n.url, 0);
  t.teardown(() => w.provider?.destroy());
  const probe = compiled('Probe');
  const iface = new ethers.Interface(probe.abi);
  const deploy = await waitReceipt(
    n.url,
    await rpcOk(n.url, 'eth_sendRawTransaction', [await signCall(w, null, probe.bytecode, 0, 1_000_000n)]),
  );
  const address = deploy.contractAddress as string;
  const set = async (v: bigint, nonce: number) =>
    waitReceipt(
      n.url,
      await rpcOk(n.url, 'eth_sendRawTransaction', [await signCall(w, address, iface.encodeFunctionData('set', [v]), nonce)]),
    );
  await set(1n, 1);
  // readApart burns the call's gas between its two reads while set(2) is mined; more gas until the
  // call outlasts the mining on this machine.
  let nonce = 2;
  for (const gas of [5_000_000n, 15_000_000n, 40_000_000n]) {
    let callDone = false;
    const call = rpcOk(n.url, 'eth_call', [
      { to: address, data: iface.encodeFunctionData('readApart', [30_000n]), gas: ethers.toQuantity(gas) },
      'latest',
    ]).finally(() => {
      callDone = true;
    });
    const before = BigInt(nonce - 1);
    await set(BigInt(nonce), nonce);
    nonce++;
    const minedWhileCalling = !callDone;
    const [a, b] = iface.decodeFunctionResult('readApart', await call);
    t.deepEqual([a, b], [before, before]);
    if (minedWhileCalling) {
      t.pass('the call saw one state while a block changed it');
      break;
    }
    t.log(`a call with ${gas} gas ended before the block; retrying with more gas`);
  }
  const [a2, b2] = iface.decodeFunctionResult(
    'readApart',
    await rpcOk(n.url, 'eth_call', [
      { to: address, data: iface.encodeFunctionData('readApart', [30_000n]), gas: '0x100000' },
      'latest',
    ]),
  );
  t.deepEqual([a2, b2], [BigInt(nonce - 1), BigInt(nonce - 1)]);
});
