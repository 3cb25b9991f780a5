import { accountKeyBytes, decodeAccount, keyBytes, type StateProof } from '../state/index.js';
import { decodeU128, tokenBalanceKey } from '../modules/index.js';
import { weiToBase } from '../ledger/index.js';
import type { NodeContext } from './context.js';

export interface AccountProofView {
  address: string;
  height: number;
  state_root: string;
  /** Present when the account exists in state. */
  account: { balance: bigint; balance_wei: bigint; nonce: bigint } | null;
  proof: StateProof | null;
  /** With `?token=SRC20_…`: the token balance and the proof of its state key (absent key = zero balance). */
  token?: { contract: string; balance: bigint; proof: StateProof | null };
}

/**
 * Membership proof of an account against the current head's state root. The state trie always
 * equals the head's state between blocks; so wait for any in-flight block, then prove synchronously.
 */
export async function accountProof(ctx: NodeContext, address: string, tokenContract?: string): Promise<AccountProofView> {
  await ctx.chain.settled();
  const token = tokenContract === undefined ? undefined : tokenProof(ctx, tokenContract, address);
  const head = ctx.chain.head;
  const proof = ctx.chain.state.prove(accountKeyBytes(address));
  const acc = proof ? decodeAccount(Buffer.from(proof.value, 'hex')) : null;
  return {
    address,
    height: head.index,
    state_root: head.state_root,
    account: acc ? { balance: weiToBase(acc.balance), balance_wei: acc.balance, nonce: acc.nonce } : null,
    proof,
    ...(token ? { token } : {}),
  };
}

function tokenProof(ctx: NodeContext, contract: string, address: string): AccountProofView['token'] {
  const proof = ctx.chain.state.prove(keyBytes(tokenBalanceKey(contract, address)));
  return { contract, balance: proof ? decodeU128(Buffer.from(proof.value, 'hex')) : 0n, proof };
}
