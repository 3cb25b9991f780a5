import { ethers } from 'ethers';
import { defineChain } from 'viem';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic, privateKeyHex, signTransaction } from '../../ts/ledger/index.js';
import { httpJson } from './node.js';
import { waitFor } from './util.js';

export const CHAIN_ID = 7120;
export { DEV_MNEMONIC };

/** Dev account i of the mnemonic (m/44'/60'/0'/0/i), funded with 10,000 coins on the dev chain. */
export function devKey(i: number): KeyPair {
  return keyPairFromMnemonic(DEV_MNEMONIC, i);
}

export const devPrivateKey = (i: number): `0x${string}` => `0x${privateKeyHex(devKey(i))}`;

/** A raw signed EIP-1559 value transfer (21,000 gas, 2 gwei fee cap) on the test chain. */
export function signTransfer(privateKey: string, nonce: number, to: string, value: bigint): Promise<string> {
  return new ethers.Wallet(privateKey).signTransaction({
    type: 2,
    chainId: CHAIN_ID,
    nonce,
    to,
    value,
    gasLimit: 21_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
}

export interface RpcReply<T = any> {
  result?: T;
  error?: { code: number; message: string; data?: unknown };
}

/** One raw JSON-RPC call to `${url}/rpc` (url = the node's base URL). */
export async function rpc<T = any>(url: string, method: string, params: unknown[] = []): Promise<RpcReply<T>> {
  const r = await httpJson<RpcReply<T>>(`${url}/rpc`, { method: 'POST', json: { jsonrpc: '2.0', id: 1, method, params } });
  if (r.status !== 200 || !r.body) throw new Error(`${method}: HTTP ${r.status} ${r.text}`);
  return r.body;
}

/** The result of a JSON-RPC call that must succeed. */
export async function rpcOk<T = any>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const r = await rpc<T>(url, method, params);
  if (r.error) throw new Error(`${method} failed: ${r.error.code} ${r.error.message}`);
  return r.result as T;
}

export async function headHeight(url: string): Promise<number> {
  return Number(await rpcOk<string>(url, 'eth_blockNumber'));
}

/** Poll eth_getTransactionReceipt until the transaction is in a block. */
export function waitReceipt(url: string, hash: string, timeoutMs = 30_000): Promise<any> {
  return waitFor(() => rpcOk(url, 'eth_getTransactionReceipt', [hash]), timeoutMs, `receipt of ${hash}`);
}

/** REST balance in base units (1 base unit = 1e10 wei). */
export async function restBalance(url: string, address: string): Promise<bigint> {
  const r = await httpJson(`${url}/accounts/${address.toLowerCase()}/balance`);
  if (r.status !== 200) throw new Error(`balance: HTTP ${r.status} ${r.text}`);
  return BigInt(r.body.balance);
}

/** A native transfer signed by the ledger rules and submitted through POST /transactions; returns its txid. */
export async function sendNative(url: string, from: KeyPair, to: string, amount: bigint, nonce: bigint): Promise<string> {
  const tx = signTransaction({ from: from.address, to, amount, fee: 10_000n, nonce, chain_id: CHAIN_ID }, from);
  const r = await httpJson(`${url}/transactions`, { method: 'POST', json: { transaction: tx } });
  if (r.status !== 200) throw new Error(`POST /transactions: ${r.status} ${r.text}`);
  return tx.txid;
}

/**
 * An ethers provider on the node's JSON-RPC endpoint: static network, fast polling, and no request cache
 * (ethers reuses an identical request's answer for 250 ms by default; test nodes make a block every 200 ms,
 * so a cached eth_getTransactionCount would hand the next transaction a nonce already used).
 */
export function ethersProvider(url: string): ethers.JsonRpcProvider {
  return new ethers.JsonRpcProvider(
    `${url}/rpc`,
    { chainId: CHAIN_ID, name: 'native' },
    { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 },
  );
}

export function ethersWallet(url: string, i: number, provider = ethersProvider(url)): ethers.Wallet {
  return new ethers.Wallet(devPrivateKey(i), provider);
}

/** Sign an EIP-1559 call (to = null: contract creation) with an explicit nonce and gas (no round trips to the node). */
export function signCall(w: ethers.Wallet, to: string | null, data: string, nonce: number, gasLimit = 200_000n): Promise<string> {
  return w.signTransaction({
    type: 2,
    chainId: BigInt(CHAIN_ID),
    to,
    data,
    nonce,
    gasLimit,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
}

/** The node's chain as viem sees it (id 7120, 18-decimal native coin). */
export function viemChain(url: string) {
  return defineChain({
    id: CHAIN_ID,
    name: 'native-dev',
    nativeCurrency: { name: 'Native', symbol: 'NATIVE', decimals: 18 },
    rpcUrls: { default: { http: [`${url}/rpc`] } },
  });
}

/** ABI encoding of Solidity's Error(string), as a revert carries it. */
export function errorStringData(reason: string): string {
  return `0x08c379a0${ethers.AbiCoder.defaultAbiCoder().encode(['string'], [reason]).slice(2)}`;
}

/** The error a promise rejects with (throws when it resolves). */
export async function rejection(p: Promise<unknown>): Promise<any> {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}
