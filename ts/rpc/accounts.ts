/**
 * Accounts the node signs for, on the dev chain only (`--dev`; elsewhere eth_accounts is the spec's [] and
 * the signing methods do not exist): eth_accounts lists the dev mnemonic's accounts; eth_sendTransaction
 * signs with them (or sends unsigned from an impersonated address); eth_sign, personal_sign and
 * eth_signTypedData_v4 sign as geth and MetaMask do.
 */
import { type DevChain, type SendArgs, devChainOf, signMessage, signTypedData } from '../dev/index.js';
import { type NodeContext, chainIdOf } from '../services/index.js';
import { fromHex, isAddress } from '../util/index.js';
import { parseCallArgs } from './evm.js';
import { parseQuantity } from './params.js';
import { RPC, RpcError, type RpcTable, invalidParams } from './types.js';

function devOf(ctx: NodeContext): DevChain {
  const dev = devChainOf(ctx);
  if (!dev) throw new RpcError(RPC.methodNotFound, 'this method exists on the dev chain only');
  return dev;
}

const optional = (o: Record<string, unknown>, f: string, i = 0): bigint | undefined =>
  o[f] === undefined || o[f] === null ? undefined : parseQuantity(o[f], i);

/** eth_sendTransaction's object: a call object plus from (required), nonce, fee fields and type. */
export function parseSendArgs(ctx: NodeContext, raw: unknown): SendArgs {
  const call = parseCallArgs(raw);
  const o = raw as Record<string, unknown>;
  if (!call.from) throw invalidParams('invalid argument 0: from is required');
  const chainId = optional(o, 'chainId');
  if (chainId !== undefined && chainId !== BigInt(chainIdOf(ctx))) {
    throw invalidParams(`invalid argument 0: chainId ${chainId} is not this chain's ${chainIdOf(ctx)}`);
  }
  const type = optional(o, 'type');
  return {
    ...call,
    from: call.from,
    nonce: optional(o, 'nonce'),
    gasPrice: optional(o, 'gasPrice'),
    maxFeePerGas: optional(o, 'maxFeePerGas'),
    maxPriorityFeePerGas: optional(o, 'maxPriorityFeePerGas'),
    type: type === undefined ? undefined : Number(type),
  };
}

/** A message to sign: hex bytes, or (personal_sign from some wallets) plain text. */
function messageBytes(v: unknown, i: number): Uint8Array {
  if (typeof v !== 'string') throw invalidParams(`invalid argument ${i}: message must be a string`);
  return /^0x([0-9a-fA-F]{2})*$/.test(v) ? fromHex(v) : Buffer.from(v, 'utf8');
}

function address(v: unknown, i: number): string {
  if (!isAddress(v)) throw invalidParams(`invalid argument ${i}: address must be 0x + 40 hex characters (42 characters)`);
  return v;
}

export const devAccountMethods: RpcTable = {
  eth_accounts: { params: [], handler: (ctx) => devOf(ctx).accounts.addresses() },
  eth_requestAccounts: { params: [], handler: (ctx) => devOf(ctx).accounts.addresses() },
  eth_sendTransaction: {
    params: ['object'],
    handler: async (ctx, [raw]) => {
      const dev = devOf(ctx);
      const tx = await dev.sendTransaction(ctx, parseSendArgs(ctx, raw));
      // With automine the answer comes once the transaction's block is committed, as on Hardhat and anvil.
      await dev.mined(tx.txid);
      return `0x${tx.txid}`;
    },
  },
  eth_sign: {
    params: ['any', 'any'],
    handler: (ctx, [a, data]) => signMessage(messageBytes(data, 1), devOf(ctx).accounts.signer(address(a, 0))),
  },
  personal_sign: {
    params: ['any', 'any', 'any?'],
    handler: (ctx, [data, a]) => signMessage(messageBytes(data, 0), devOf(ctx).accounts.signer(address(a, 1))),
  },
  eth_signTypedData_v4: {
    params: ['any', 'any'],
    handler: (ctx, [a, typed]) => signTypedData(typed, devOf(ctx).accounts.signer(address(a, 0))),
  },
};
