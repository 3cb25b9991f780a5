/** What every signing command of the wallet does: read the chain id and next nonce, submit, wait for inclusion. */
import type { NodeClient, Reply } from './client.js';

/** The body of a 200 answer, else a plain error naming the URL and the status. */
export function expectOk<T>(client: NodeClient, r: Reply<T>): T {
  if (r.status === 200 && r.body !== null) return r.body;
  const detail = (r.body as { error?: string } | null)?.error;
  throw new Error(`${client.baseUrl} answered HTTP ${r.status}${detail ? `: ${detail}` : ''}`);
}

/** The chain id and the sender's next nonce: committed nonce + its transactions still in the mempool. */
export async function signingContext(client: NodeClient, address: string): Promise<{ chainId: number; nonce: bigint }> {
  const status = expectOk(client, await client.get<{ chain_id: number }>('/native_status'));
  const pending = expectOk(client, await client.get<{ transactions: { from_address: string }[] }>('/mempool'));
  const nonceRes = expectOk(client, await client.get<{ nonce: bigint }>(`/accounts/${address}/nonce`));
  const inPool = pending.transactions.filter((t) => t.from_address === address).length;
  return { chainId: status.chain_id, nonce: BigInt(nonceRes.nonce) + BigInt(inPool) };
}

/** Poll GET /transactions/{txid} until confirmed; the block height, or null at the deadline. */
export async function waitForInclusion(client: NodeClient, txid: string, timeoutS: number): Promise<number | null> {
  const deadline = Date.now() + timeoutS * 1000;
  while (Date.now() < deadline) {
    const r = await client.get<{ status: string; block_index: number }>(`/transactions/${txid}`);
    if (r.body?.status === 'confirmed') return r.body.block_index;
    await new Promise((ok) => setTimeout(ok, 200));
  }
  return null;
}
