/**
 * The dev chain's JSON-RPC warm-up (docs/dev-chain.md, "Warm-up"): before a node with automine reports ready,
 * it answers once, in-process, the requests a Hardhat test suite starts with (a provider's first questions, an
 * estimate, a deployment by eth_sendTransaction, its receipt, a call, a reverting estimate, the clock and
 * manual mining, loadFixture's evm_snapshot / evm_revert), then reverts to a snapshot taken first: the chain,
 * its state, the pool, the clock and the snapshot ids are as before. V8 compiles each of those paths on its
 * first use; a fresh node otherwise spent that on the suite's first requests (about half of the server's CPU
 * during the Hardhat oracle's suite, bench/hardhat-oracle.ts).
 */
import { WARM_UP_INIT_CODE } from '../dev/index.js';
import type { NodeContext } from '../services/index.js';
import { type RpcDispatcher, type RpcResponse, serializeRpc } from './dispatcher.js';

/** The services' warm-up contract (loops long enough for V8 to optimize the interpreter), deployed here for real. */
const INIT_CODE = `0x${WARM_UP_INIT_CODE.toString('hex')}`;
/** Init code that reverts at once: the failing estimate a `revertedWith` test sends. */
const REVERTING_INIT_CODE = '0x60006000fd';

type Call = [method: string, params?: unknown[]];

/** Answers one request through the dispatcher as POST /rpc would, body in and text out; throws on an error answer. */
async function ask(dispatcher: RpcDispatcher, [method, params = []]: Call, expectError = false): Promise<unknown> {
  const body = Buffer.from(JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }));
  const out = (await dispatcher.handleBody(body)) as RpcResponse;
  const text = serializeRpc(out);
  if ((out.error !== undefined) !== expectError) throw new Error(`warm-up: ${method} answered ${text.slice(0, 200)}`);
  return out.result;
}

/**
 * Run the warm-up (automine on, no interval mining: the caller checks). Returns whether every step answered as
 * expected; a step that does not stops it, and the chain goes back to the first snapshot either way (a failure
 * of that revert is thrown: the chain would keep the warm-up's blocks). `rpc` is a dispatcher of its own
 * (createRpcDispatcher, without the metrics hooks: warm-up calls are not the node's traffic).
 */
export async function warmUpRpc(ctx: NodeContext, rpc: RpcDispatcher): Promise<boolean> {
  const dev = ctx.dev;
  if (!dev) return false;
  const first = (await ask(rpc, ['evm_snapshot'])) as string;
  const complete = await suiteLike(rpc).then(
    () => true,
    () => false, // only the first requests stay slower
  );
  if ((await ask(rpc, ['evm_revert', [first]])) !== true) throw new Error('warm-up: evm_revert to its first snapshot failed');
  dev.snapshots.restartIds();
  return complete;
}

async function suiteLike(rpc: RpcDispatcher): Promise<void> {
  for (const call of [
    ['eth_chainId'],
    ['web3_clientVersion'],
    ['net_version'],
    ['eth_blockNumber'],
    ['eth_getBlockByNumber', ['latest', false]],
    ['eth_gasPrice'],
    ['eth_maxPriorityFeePerGas'],
    ['eth_feeHistory', ['0x1', 'latest', [50]]],
  ] as Call[])
    await ask(rpc, call);
  const [from, to] = (await ask(rpc, ['eth_accounts'])) as string[];
  const gas = (await ask(rpc, ['eth_estimateGas', [{ from, data: INIT_CODE }]])) as string;
  const hash = await ask(rpc, ['eth_sendTransaction', [{ from, data: INIT_CODE, gas }]]);
  await ask(rpc, ['eth_getTransactionByHash', [hash]]);
  const receipt = (await ask(rpc, ['eth_getTransactionReceipt', [hash]])) as { contractAddress: string };
  const contract = receipt.contractAddress;
  for (const call of [
    ['eth_call', [{ from, to: contract, data: '0x' }, 'latest']],
    ['eth_getCode', [contract, 'latest']],
    ['eth_getBalance', [from, 'latest']],
    ['eth_getTransactionCount', [from, 'latest']],
    ['eth_getBlockByNumber', ['latest', true]],
  ] as Call[])
    await ask(rpc, call);
  const inner = (await ask(rpc, ['evm_snapshot'])) as string;
  const head = (await ask(rpc, ['eth_getBlockByNumber', ['latest', false]])) as { timestamp: string };
  await ask(rpc, ['evm_setNextBlockTimestamp', [Number(head.timestamp) + 100]]);
  await ask(rpc, ['hardhat_mine']);
  await ask(rpc, ['eth_estimateGas', [{ from, data: REVERTING_INIT_CODE }]], true);
  const transfer = { from, to, value: '0x1' };
  const transferGas = await ask(rpc, ['eth_estimateGas', [transfer]]);
  await ask(rpc, ['eth_sendTransaction', [{ ...transfer, gas: transferGas }]]);
  if ((await ask(rpc, ['evm_revert', [inner]])) !== true) throw new Error('warm-up: evm_revert answered false');
}
