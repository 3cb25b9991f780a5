import test from 'ava';
import { ethers } from 'ethers';
import { startTestNode } from '../helpers/node.js';
import { devKey, ethersWallet, rpcOk, sendNative } from '../helpers/evm.js';

test('a block mixing native and EVM transactions: cumulativeGasUsed counts EVM gas and ends at the block gasUsed', async (t) => {
  // A long block time, so this test decides when the block is made.
  const n = await startTestNode({ blockTimeMs: 600_000 });
  t.teardown(n.stop);
  const url = n.url;
  const nativeId = await sendNative(n.url, devKey(6), devKey(7).address, 5n, 0n);
  const w = ethersWallet(n.url, 8);
  const raw = await w.signTransaction({
    type: 2,
    chainId: 7120,
    nonce: 0,
    to: devKey(9).address,
    value: 1n,
    gasLimit: 21_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
  });
  const evmHash = await rpcOk<string>(url, 'eth_sendRawTransaction', [raw]);
  const info = await n.node.consensus.produce();
  t.is(info.txCount, 2);
  const block = await rpcOk<any>(url, 'eth_getBlockByNumber', [ethers.toQuantity(info.height), false]);
  const receipts = await rpcOk<any[]>(url, 'eth_getBlockReceipts', [ethers.toQuantity(info.height)]);
  t.deepEqual(
    receipts.map((r) => r.transactionHash),
    [`0x${nativeId}`, evmHash],
  );
  t.is(receipts[0].gasUsed, '0x5208');
  t.is(receipts[0].cumulativeGasUsed, '0x0');
  t.is(receipts[1].gasUsed, '0x5208');
  t.is(receipts[1].cumulativeGasUsed, block.gasUsed);
  t.is(block.gasUsed, '0x5208');
});
