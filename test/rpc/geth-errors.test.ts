/**
 * Refused transactions answer JSON-RPC with geth's words first (so ethers and viem raise their typed errors),
 * our detail after them and the spec's code; REST keeps the spec's exact messages.
 */
import test from 'ava';
import type { ethers } from 'ethers';
import { createWalletClient, http, NonceTooHighError, NonceTooLowError } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { gethWords } from '../../ts/rpc/geth-errors.js';
import { signTransaction } from '../../ts/ledger/index.js';
import {
  CHAIN_ID,
  devKey,
  devPrivateKey,
  ethersProvider,
  ethersWallet,
  rejection,
  rpc,
  viemChain,
  waitReceipt,
} from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';

let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

const GWEI = 1_000_000_000n;
const tx = (nonce: number) => ({
  to: devKey(9).address,
  nonce,
  gasLimit: 21_000n,
  maxFeePerGas: 2n * GWEI,
  maxPriorityFeePerGas: 1n,
  chainId: BigInt(CHAIN_ID),
  type: 2,
});

test('eth_sendRawTransaction refusals: geth words + our detail, code -32603; ethers and viem type them', async (t) => {
  const provider = ethersProvider(n.url);
  t.teardown(() => provider.destroy());
  const w = ethersWallet(n.url, 6, provider);
  const send = async (fields: ethers.TransactionRequest) =>
    (await rpc(n.url, 'eth_sendRawTransaction', [await w.signTransaction(fields)])).error;

  t.deepEqual(await send(tx(3)), { code: -32603, message: 'nonce too high: expected 0, got 3' });
  t.deepEqual(await send({ ...tx(0), gasLimit: 20_999n }), {
    code: -32603,
    message: 'intrinsic gas too low: have 20999, want 21000',
  });
  // Osaka (a new dev chain) caps a transaction's gas at 2^24 (EIP-7825), below the block gas limit.
  t.regex((await send({ ...tx(0), gasLimit: 30_000_001n }))!.message, /^transaction gas limit too high: .*cap 16777216/);
  t.regex((await send({ ...tx(0), value: 10n ** 30n }))!.message, /^insufficient funds for gas \* price \+ value: available \d+/);
  t.regex((await send({ ...tx(0), maxFeePerGas: GWEI - 1n }))!.message, /^max fee per gas less than block base fee/);
  t.regex((await send({ ...tx(0), chainId: 1n }))!.message, /^invalid chain id for signer: signed for chain 1/);
  const initcode = await send({ ...tx(0), to: null, data: `0x${'00'.repeat(49_153)}`, gasLimit: 16_000_000n });
  t.is(initcode?.code, -32603);
  t.regex(initcode!.message, /^max initcode size exceeded/);

  const raw = await w.signTransaction(tx(0));
  const hash = (await rpc(n.url, 'eth_sendRawTransaction', [raw])).result;
  const again = (await rpc(n.url, 'eth_sendRawTransaction', [raw])).error;
  t.is(again?.code, -32603);
  t.true(['already known: already in mempool', 'nonce too low: expected 1, got 0'].includes(again!.message), again!.message);
  await waitReceipt(n.url, hash);
  t.deepEqual(await send(tx(0)), { code: -32603, message: 'nonce too low: expected 1, got 0' });

  // ethers: typed errors from the words.
  const low = await rejection(provider.broadcastTransaction(await w.signTransaction(tx(0))));
  t.is(low.code, 'NONCE_EXPIRED');
  const poor = await rejection(provider.broadcastTransaction(await w.signTransaction({ ...tx(1), value: 10n ** 30n })));
  t.is(poor.code, 'INSUFFICIENT_FUNDS');
  // viem (wallet client, local account): typed errors from the words.
  const wallet = createWalletClient({
    account: privateKeyToAccount(devPrivateKey(6)),
    chain: viemChain(n.url),
    transport: http(`${n.url}/rpc`),
  });
  const viemSend = (nonce: number) =>
    rejection(
      wallet.sendTransaction({
        to: devKey(9).address as `0x${string}`,
        nonce,
        gas: 21_000n,
        maxFeePerGas: 2n * GWEI,
        maxPriorityFeePerGas: 1n,
      }),
    );
  const tooHigh = await viemSend(9);
  t.truthy(
    tooHigh.walk((e: unknown) => e instanceof NonceTooHighError),
    String(tooHigh),
  );
  const tooLow = await viemSend(0);
  t.truthy(
    tooLow.walk((e: unknown) => e instanceof NonceTooLowError),
    String(tooLow),
  );
});

test('native_sendTransaction speaks geth words too; REST keeps the spec messages', async (t) => {
  const k = devKey(7);
  const native = (nonce: bigint, amount = 5n) =>
    signTransaction({ from: k.address, to: devKey(9).address, amount, fee: 10_000n, nonce, chain_id: CHAIN_ID }, k);
  const viaRpc = (await rpc(n.url, 'native_sendTransaction', [native(4n)])).error;
  t.deepEqual(viaRpc, { code: -32603, message: 'nonce too high: expected 0, got 4' });
  const viaRest = await httpJson(`${n.url}/transactions`, { method: 'POST', json: { transaction: native(4n) } });
  t.deepEqual(viaRest.body, { success: false, error: 'Invalid nonce: expected 0, got 4' });
  // No geth equivalent: our message stands.
  t.deepEqual((await rpc(n.url, 'native_sendTransaction', [native(0n, 0n)])).error, {
    code: -32603,
    message: 'Invalid transaction: amount must be > 0 (unless token/EVM operation)',
  });
});

test('gethWords: every admission reason, including the ones a later admission adds', (t) => {
  t.is(gethWords('nonce', 'expected 13, got 12'), 'nonce too low');
  t.is(gethWords('nonce', 'expected 13, got 18'), 'nonce too high');
  t.is(gethWords('nonce', 'something else'), null);
  t.is(gethWords('balance', 'available 1, required 2 (base units)'), 'insufficient funds for gas * price + value');
  t.is(gethWords('duplicate', 'already in mempool'), 'already known');
  t.is(gethWords('replacement', 'fee must rise by 10%'), 'replacement transaction underpriced');
  t.is(gethWords('gas', 'intrinsic gas too low: have 1, want 2'), 'intrinsic gas too low');
  t.is(gethWords('gas', 'exceeds block gas limit 30000000'), 'exceeds block gas limit');
  t.is(gethWords('fee', 'fee must be at least 10000 base units (MIN_TX_FEE)'), 'transaction underpriced');
  t.is(gethWords('fee', 'max fee per gas 1 below the base fee 2'), 'max fee per gas less than block base fee');
  t.is(
    gethWords('chain_id', 'only replay-protected (EIP-155) transactions are accepted'),
    'only replay-protected (EIP-155) transactions allowed over RPC',
  );
  t.is(gethWords('chain_id', 'signed for chain 1, this chain is 7120'), 'invalid chain id for signer');
  t.is(gethWords('signature', 'signature verification failed'), 'invalid sender');
  t.is(gethWords('sender_limit', 'too many pending transactions from this sender'), 'account limit exceeded');
  t.is(gethWords('pool_full', 'mempool is full'), 'txpool is full');
  for (const reason of ['amount', 'data', 'integrity', 'timestamp']) t.is(gethWords(reason, 'x'), null, reason);
});
