/**
 * The dev chain's warm-up before it reports ready (docs/dev-chain.md, "Warm-up"). V8 compiles the EVM, the
 * transaction decoder and block execution on their first use, so a fresh node answered the first requests of a
 * test suite (an estimate, a deployment and its block) several times slower than the same requests a moment
 * later. The node runs that path once at start, on nothing that stays: an estimate and a call of a contract
 * creation, the same creation signed by a dev key, decoded as admission decodes it and executed as the next
 * block on a throwaway overlay (never sealed or committed), and a block signature over a dummy digest.
 */
import { createTx } from '@ethereumjs/tx';
import { chainCommon, decodeSignedEvmTransaction, storedEvmTransaction } from '../../execution/index.js';
import { signDigest } from '../../ledger/keys.js';
import { getNonce } from '../account-queries.js';
import type { NodeContext } from '../context.js';
import { INITIAL_BASE_FEE_WEI } from '../eth-shapes.js';
import { estimateGas, ethCall } from '../evm-queries.js';
import type { DevAccounts } from './accounts.js';

/**
 * Init code touching what a test suite's contracts do: SSTORE/SLOAD, KECCAK256, LOG1, a CALL moving 1 wei to
 * 0xdead, and a one-byte runtime code returned.
 */
const INIT_CODE = Buffer.from(
  '602a600055600054506020600020' + '60206000a1' + '6000600060006000600161dead5af150' + '600060005360016000f3',
  'hex',
);

export async function warmUp(ctx: NodeContext, accounts: DevAccounts): Promise<void> {
  const from = accounts.addresses()[0];
  const key = accounts.signer(from);
  const call = { from, data: INIT_CODE, value: 1n };
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
      data: INIT_CODE,
      maxPriorityFeePerGas: INITIAL_BASE_FEE_WEI,
      maxFeePerGas: 3n * INITIAL_BASE_FEE_WEI,
    },
    { common },
  )
    .sign(key.privateKey)
    .serialize();
  const tx = storedEvmTransaction(decodeSignedEvmTransaction(raw, common), raw, ctx.chain.now());
  const proposer = ctx.validatorKey;
  // The execution's overlay is dropped: the state, the chain and the pool stay as they were.
  await ctx.chain.execute([tx], proposer?.address ?? from, ctx.chain.now());
  if (proposer) signDigest(new Uint8Array(32).fill(1), proposer.privateKey);
}
