/**
 * eth_sendTransaction on the dev chain: the node fills in what the caller left out (nonce, gas, fees) as
 * geth and Hardhat do, signs with the sender's dev key or marks it impersonated, and submits the raw
 * transaction through admission like eth_sendRawTransaction.
 */
import { type TypedTxData, createTx } from '@ethereumjs/tx';
import { type CallArgs, PARAMS_LOADED, chainCommon, impersonatedRawTransaction } from '../execution/index.js';
import type { SignedTransaction } from '../ledger/index.js';
import { InvalidParamsError } from '../util/index.js';
import { getPendingNonce, type NodeContext, INITIAL_BASE_FEE_WEI, estimateGas } from '../services/index.js';
import type { DevAccounts } from './accounts.js';
import { evmHardforkAt } from '../chain/index.js';

export interface SendArgs extends CallArgs {
  from: string;
  nonce?: bigint;
  /** Legacy (type 0) or EIP-2930 (type 1) price; absent: EIP-1559 fees. */
  gasPrice?: bigint;
  maxFeePerGas?: bigint;
  maxPriorityFeePerGas?: bigint;
  type?: number;
}

/** The transaction type geth picks from the fee fields given: 1559 unless a gas price is named. */
function typeOf(a: SendArgs): number {
  if (a.type !== undefined) return a.type;
  if (a.gasPrice !== undefined && a.maxFeePerGas === undefined && a.maxPriorityFeePerGas === undefined) {
    return a.accessList ? 1 : 0;
  }
  return 2;
}

/** Fill, sign (or mark impersonated) and submit; resolves to the stored transaction. */
export async function sendTransaction(ctx: NodeContext, accounts: DevAccounts, a: SendArgs): Promise<SignedTransaction> {
  const sender = accounts.sender(a.from);
  const type = typeOf(a);
  if (type !== 0 && type !== 1 && type !== 2)
    throw new InvalidParamsError(`invalid argument 0: transaction type ${type} is not supported`);
  const nonce = a.nonce ?? getPendingNonce(ctx, a.from);
  // Without a gas limit the estimate decides; a call that reverts is refused here with its reason, as geth does.
  const gasLimit =
    a.gas ?? (await estimateGas(ctx, { from: a.from, to: a.to, data: a.data, value: a.value, accessList: a.accessList }));
  const tip = a.maxPriorityFeePerGas ?? INITIAL_BASE_FEE_WEI;
  const data: TypedTxData = {
    type,
    nonce,
    gasLimit,
    to: a.to as `0x${string}` | undefined,
    value: a.value ?? 0n,
    data: a.data ?? new Uint8Array(0),
    ...(type === 2
      ? { maxPriorityFeePerGas: tip, maxFeePerGas: a.maxFeePerGas ?? 2n * INITIAL_BASE_FEE_WEI + tip }
      : { gasPrice: a.gasPrice ?? 2n * INITIAL_BASE_FEE_WEI }),
    ...(type !== 0 ? { accessList: (a.accessList ?? []) as never } : {}),
  } as TypedTxData;
  const common = chainCommon(ctx.chain.params.chainId, evmHardforkAt(ctx.chain.params, ctx.chain.height + 1));
  // eth_sendTransaction answers once the transaction is mined when automine is on (rpc/accounts.ts).
  const answeredOnceMined = ctx.dev?.minesOnAdmission === true;
  if (sender.kind === 'impersonated') {
    const raw = impersonatedRawTransaction(data, a.from.toLowerCase(), common);
    return ctx.admission.submitRaw(raw, 'api', { impersonated: true, answeredOnceMined });
  }
  const raw = createTx(data, { common, params: PARAMS_LOADED }).sign(sender.key.privateKey).serialize();
  return ctx.admission.submitRaw(raw, 'api', { answeredOnceMined });
}
