import { accountKeyBytes, decodeAccount } from '../state/accounts.js';
import type { StateProof } from '../state/trie.js';
import { weiToBase } from '../ledger/units.js';
import type { NodeContext } from './context.js';

export interface AccountProofView {
  address: string;
  height: number;
  state_root: string;
  /** Present when the account exists in state. */
  account: { balance: bigint; balance_wei: bigint; nonce: bigint } | null;
  proof: StateProof | null;
}

/**
 * Membership proof of an account against the current head's state root. The state trie always
 * equals the head's state between blocks; so wait for any in-flight block, then prove synchronously.
 */
export async function accountProof(ctx: NodeContext, address: string): Promise<AccountProofView> {
  await ctx.chain.settled();
  const head = ctx.chain.head;
  const proof = ctx.chain.state.prove(accountKeyBytes(address));
  const acc = proof ? decodeAccount(Buffer.from(proof.value, 'hex')) : null;
  return {
    address,
    height: head.index,
    state_root: head.state_root,
    account: acc ? { balance: weiToBase(acc.balance), balance_wei: acc.balance, nonce: acc.nonce } : null,
    proof,
  };
}
