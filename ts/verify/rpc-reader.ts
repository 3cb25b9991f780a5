/**
 * A ChainReader over a node's JSON-RPC (the standalone service): eth_chainId, eth_getCode,
 * eth_getTransactionByHash and eth_getTransactionReceipt, and the node's native_getContractCreation for
 * the creation transaction (a node without that method gives runtime matches without constructor arguments).
 */
import { fromHex } from '../util/index.js';
import type { ChainReader, CreationTransaction } from './interface.js';

/** Time one JSON-RPC request may take. */
export const RPC_TIMEOUT_MS = 30_000;
/** JSON-RPC "method not found". */
const METHOD_NOT_FOUND = -32601;

export class RpcError extends Error {
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export interface RpcReaderOptions {
  /** The node's JSON-RPC URL (the bare API URL works: the node answers JSON-RPC on POST /). */
  url: string;
  /** X-API-Key, when the node checks one on JSON-RPC. */
  apiKey?: string;
}

export class RpcChainReader implements ChainReader {
  private nextId = 1;

  constructor(private readonly opts: RpcReaderOptions) {}

  private async call<T>(method: string, params: unknown[]): Promise<T> {
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (this.opts.apiKey) headers['x-api-key'] = this.opts.apiKey;
    const res = await fetch(this.opts.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: this.nextId++, method, params }),
      signal: AbortSignal.timeout(RPC_TIMEOUT_MS),
    });
    const text = await res.text();
    if (!res.ok) throw new RpcError(`${method}: HTTP ${res.status} from ${this.opts.url}: ${text.slice(0, 200)}`);
    const reply = JSON.parse(text) as { result?: T; error?: { code: number; message: string } };
    if (reply.error) throw new RpcError(`${method}: ${reply.error.message}`, reply.error.code);
    return reply.result as T;
  }

  async chainId(): Promise<number> {
    return Number(BigInt(await this.call<string>('eth_chainId', [])));
  }

  async getCode(address: string): Promise<Uint8Array> {
    return fromHex(await this.call<string>('eth_getCode', [address, 'latest']));
  }

  async findCreationTx(address: string): Promise<string | null> {
    try {
      const c = await this.call<{ transactionHash: string } | null>('native_getContractCreation', [address]);
      return c?.transactionHash ?? null;
    } catch (err) {
      if (err instanceof RpcError && err.code === METHOD_NOT_FOUND) return null;
      throw err;
    }
  }

  async getTransaction(hash: string): Promise<CreationTransaction | null> {
    const [tx, receipt] = await Promise.all([
      this.call<Record<string, string> | null>('eth_getTransactionByHash', [hash]),
      this.call<Record<string, string | null> | null>('eth_getTransactionReceipt', [hash]),
    ]);
    if (!tx || !receipt || tx.blockNumber === null) return null;
    return {
      hash: tx.hash,
      input: fromHex(tx.input ?? '0x'),
      from: tx.from.toLowerCase(),
      blockNumber: Number(tx.blockNumber),
      transactionIndex: Number(tx.transactionIndex),
      contractAddress: receipt.contractAddress ? receipt.contractAddress.toLowerCase() : null,
    };
  }
}
