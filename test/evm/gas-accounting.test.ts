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

test('blocks reuse their VM without carrying anything over: warm sets and transient storage start afresh each block', async (t) => {
  const n = await startTestNode({ blockTimeMs: 0 });
  t.teardown(n.stop);
  const [from] = await rpcOk<string[]>(n.url, 'eth_accounts');
  // Runtime: revert if transient slot 0 is set; set it; SLOAD slot 5 and BALANCE of an outside address (both cold
  // in a fresh transaction). Carried-over transient storage would revert the second call, a carried-over warm set
  // would make it cheaper.
  const outside = devKey(9).address.slice(2);
  // 0: PUSH1 0 TLOAD ISZERO PUSH1 0x0b JUMPI; 7: PUSH1 0 DUP1 REVERT; 11: JUMPDEST PUSH1 1 PUSH1 0 TSTORE
  // PUSH1 5 SLOAD POP PUSH20 outside BALANCE POP STOP.
  const runtime = `60005c15600b57600080fd5b600160005d6005545073${outside}315000`;
  const init = `0x60${(runtime.length / 2).toString(16).padStart(2, '0')}80600b6000396000f3${runtime}`;
  const deploy = await rpcOk<string>(n.url, 'eth_sendTransaction', [{ from, data: init, gas: '0x30000' }]);
  const contract = (await rpcOk<any>(n.url, 'eth_getTransactionReceipt', [deploy])).contractAddress;
  t.is(await rpcOk(n.url, 'eth_getCode', [contract, 'latest']), `0x${runtime}`);
  const receipts = [];
  for (let i = 0; i < 3; i++) {
    const h = await rpcOk<string>(n.url, 'eth_sendTransaction', [{ from, to: contract, gas: '0x20000' }]);
    receipts.push(await rpcOk<any>(n.url, 'eth_getTransactionReceipt', [h]));
  }
  t.deepEqual(
    receipts.map((r) => r.status),
    ['0x1', '0x1', '0x1'],
  );
  t.is(new Set(receipts.map((r) => r.blockNumber)).size, 3, 'one block each');
  t.is(new Set(receipts.map((r) => r.gasUsed)).size, 1, `same gas in every block: ${receipts.map((r) => r.gasUsed)}`);
});
