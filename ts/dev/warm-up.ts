/**
 * The dev chain's warm-up before it reports ready (docs/dev-chain.md, "Warm-up"). V8 compiles the EVM, the
 * transaction decoder and block execution on their first use, so a fresh node answered the first requests of a
 * test suite (an estimate, a deployment and its block) several times slower than the same requests a moment
 * later. The node runs that path once at start, on nothing that stays: an estimate and a call of a contract
 * creation, the same creation signed by a dev key, decoded as admission decodes it, executed as the next block
 * and sealed (state root, signature, block validation) then abandoned at once (never committed), and the
 * transaction and receipt shaped as the JSON-RPC answers them.
 */
import { createTx } from '@ethereumjs/tx';
import { PARAMS_LOADED, chainCommon, decodeSignedEvmTransaction, storedEvmTransaction } from '../execution/index.js';
import {
  getNonce,
  type NodeContext,
  INITIAL_BASE_FEE_WEI,
  ethReceipt,
  ethTransaction,
  estimateGas,
  ethCall,
} from '../services/index.js';
import type { Chain } from '../chain/index.js';
import type { DevAccounts } from './accounts.js';

/**
 * Init code touching what a test suite's contracts do, long enough for V8 to optimize the interpreter's loops: 256
 * rounds of MSTORE, KECCAK256 and SSTORE; then SLOAD, LOG1, a CALL moving 1 wei to 0xdead and a one-byte runtime
 * code returned; then 1 KiB that never runs (the jump-destination analysis reads all of a contract's code).
 */
export const WARM_UP_INIT_CODE = Buffer.from(
  // 0: PUSH2 256; 3: JUMPDEST DUP1 PUSH1 0 MSTORE PUSH1 32 PUSH1 0 KECCAK256 PUSH1 1 SSTORE PUSH1 1 SWAP1 SUB DUP1
  // PUSH1 3 JUMPI; 24: POP
  '610100' +
    '5b8060005260206000206001556001900380600357' +
    '50' +
    '602a600055600054506020600020' +
    '60206000a1' +
    '6000600060006000600161dead5af150' +
    '600060005360016000f3' +
    '00'.repeat(1024),
  'hex',
);

export async function warmUp(ctx: NodeContext, chain: Chain, accounts: DevAccounts): Promise<void> {
  const from = accounts.addresses()[0];
  const key = accounts.signer(from);
  const call = { from, data: WARM_UP_INIT_CODE, value: 1n };
  const gasLimit = await estimateGas(ctx, call);
  await ethCall(ctx, call);
  const { chainId, evmHardfork } = ctx.chain.params;
  const common = chainCommon(chainId, evmHardfork);
  const raw = createTx(
    {
      type: 2,
      nonce: getNonce(ctx, from),
      gasLimit,
      value: 1n,
      data: WARM_UP_INIT_CODE,
      maxPriorityFeePerGas: INITIAL_BASE_FEE_WEI,
      maxFeePerGas: 3n * INITIAL_BASE_FEE_WEI,
    },
    { common, params: PARAMS_LOADED },
  )
    .sign(key.privateKey)
    .serialize();
  const tx = storedEvmTransaction(decodeSignedEvmTransaction(raw, common), raw, ctx.chain.now());
  const proposer = ctx.validatorKey;
  if (!proposer) return;
  const exec = await chain.execute([tx], proposer.address, ctx.chain.now());
  // Sealed (applied to the state trie, signed and validated as a block) in one step with its abandonment: the
  // trie goes back at once, nothing is committed, pooled or announced.
  const proposal = chain.seal(exec, proposer);
  chain.abandon(proposal);
  // The transaction and its receipt in the shapes eth_getTransactionByHash and eth_getTransactionReceipt answer.
  const { block, result } = proposal;
  const pos = { blockHash: block.hash, blockNumber: block.index, index: 0 };
  ethTransaction(tx, pos, chainId, evmHardfork);
  if (result.receipts[0]) ethReceipt(block, 0, result.receipts[0], 0, chainId, evmHardfork);
}
