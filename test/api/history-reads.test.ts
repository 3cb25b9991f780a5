import test from 'ava';
import { ethers } from 'ethers';
import { devKey, rpc, rpcOk, sendNative, waitReceipt } from '../helpers/evm.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

const WEI_PER_BASE = 10n ** 10n;

test('REST at_height and eth_ block numbers read past states; --history N names the oldest available block', async (t) => {
  const n = await startTestNode({ history: { kind: 'recent', blocks: 8 } });
  t.teardown(() => n.stop());
  const from = devKey(3);
  const to = ethers.Wallet.createRandom().address.toLowerCase();
  const nonce0 = BigInt(await rpcOk(n.url, 'eth_getTransactionCount', [from.address, 'latest']));
  // Three transfers to a fresh address, each in its own block: the balance after each is the running sum.
  const heights: number[] = [];
  for (const [i, amount] of [5n, 7n, 11n].entries()) {
    const txid = await sendNative(n.url, from, to, amount, nonce0 + BigInt(i));
    const rc = await waitReceipt(n.url, `0x${txid}`);
    heights.push(Number(rc.blockNumber));
  }
  const sums = [5n, 12n, 23n];
  const rest = (what: 'balance' | 'nonce', address: string, h: number | string) =>
    httpJson(`${n.url}/accounts/${address}/${what}?at_height=${h}`);
  for (const [i, h] of heights.entries()) {
    const bal = await rest('balance', to, h);
    t.is(bal.status, 200);
    t.is(BigInt(bal.body.balance), sums[i]);
    t.is(BigInt(await rpcOk(n.url, 'eth_getBalance', [to, ethers.toQuantity(h)])), sums[i] * WEI_PER_BASE);
    t.is((await rest('nonce', from.address, h)).body.nonce, Number(nonce0) + i + 1);
    t.is(Number(await rpcOk(n.url, 'eth_getTransactionCount', [from.address, ethers.toQuantity(h)])), Number(nonce0) + i + 1);
  }
  t.is(BigInt((await rest('balance', to, heights[0] - 1)).body.balance), 0n);
  t.is((await rest('nonce', from.address, heights[0] - 1)).body.nonce, Number(nonce0));
  // Without at_height: the head state, as before.
  t.is(BigInt((await httpJson(`${n.url}/accounts/${to}/balance`)).body.balance), 23n);
  // Bad input: 400; a height above the head: 404.
  const bad = await rest('balance', to, 'abc');
  t.is(bad.status, 400);
  t.regex(bad.body.error, /at_height/);
  t.is((await rest('balance', to, 10 ** 12)).status, 404);

  // Once the history has moved past the first transfer, reads there are refused with the oldest height.
  const first = heights[0] - 1;
  await waitFor(async () => (await rest('balance', to, first)).status === 400, 20_000, 'history pruned past the first transfer');
  const refused = await rest('balance', to, first);
  const oldest = Number(/oldest available block is (\d+)/.exec(refused.body.error)?.[1]);
  t.true(oldest > first);
  const r = await rpc(n.url, 'eth_getBalance', [to, ethers.toQuantity(first)]);
  t.is(r.error?.code, -32000);
  t.regex(r.error?.message ?? '', /historical state is not available for block \d+: the oldest available block is \d+/);
  // /chain/state-root/{height} answers for any height (the block header's root).
  const root = await httpJson(`${n.url}/chain/state-root/${heights[0]}`);
  t.is(root.status, 200);
  t.is(root.body.height, heights[0]);
});
