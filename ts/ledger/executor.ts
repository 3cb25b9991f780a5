import { getAccount, putAccount } from '../state/accounts.js';
import type { StateOverlay } from '../state/state-store.js';
import { blockReward } from './rewards.js';
import { getSupply, maxSupplyBase, putSupply } from './supply.js';
import type { SignedTransaction } from './transaction.js';
import { WEI_PER_BASE, baseToWei } from './units.js';

export interface BlockContext {
  height: number;
  proposer: string;
  tokenomicsV2Height: number;
}

export interface ExecutionResult {
  included: SignedTransaction[];
  /** Transactions that no longer apply (nonce or balance changed since admission); dropped from the pool. */
  dropped: { tx: SignedTransaction; reason: string }[];
  feesBase: bigint;
  burnedBase: bigint;
  rewardBase: bigint;
}

/**
 * Re-check the stateful rules of a native transfer against the state being built and apply it.
 * Returns a reason string when the transaction cannot apply (the block skips it).
 */
export function applyNativeTransfer(state: StateOverlay, tx: SignedTransaction): string | null {
  const sender = getAccount(state, tx.from_address);
  if (tx.nonce !== sender.nonce) return `Invalid nonce: expected ${sender.nonce}, got ${tx.nonce}`;
  const cost = baseToWei(tx.amount + tx.fee);
  if (sender.balance < cost) return 'Invalid transaction: insufficient balance';
  sender.balance -= cost;
  sender.nonce += 1n;
  putAccount(state, tx.from_address, sender);
  const recipient = getAccount(state, tx.to_address);
  recipient.balance += baseToWei(tx.amount);
  putAccount(state, tx.to_address, recipient);
  return null;
}

/**
 * Execute a block's transactions in order on the overlay, then pay the proposer
 * floor(fee/2) of every fee plus the block reward, burn the rest of the fees and update supply totals.
 */
export function executeBlock(ctx: BlockContext, state: StateOverlay, txs: readonly SignedTransaction[]): ExecutionResult {
  const included: SignedTransaction[] = [];
  const dropped: ExecutionResult['dropped'] = [];
  let feesBase = 0n;
  let toProposerBase = 0n;
  for (const tx of txs) {
    const err = applyNativeTransfer(state, tx);
    if (err) {
      dropped.push({ tx, reason: err });
      continue;
    }
    included.push(tx);
    feesBase += tx.fee;
    toProposerBase += tx.fee / 2n;
  }
  const burnedBase = feesBase - toProposerBase;
  const supply = getSupply(state);
  const rewardBase = blockReward(ctx.height, supply.minted / WEI_PER_BASE, maxSupplyBase(ctx.height, ctx.tokenomicsV2Height));
  const credit = toProposerBase + rewardBase;
  if (credit > 0n) {
    const proposer = getAccount(state, ctx.proposer);
    proposer.balance += baseToWei(credit);
    putAccount(state, ctx.proposer, proposer);
  }
  if (rewardBase > 0n || burnedBase > 0n) {
    putSupply(state, { minted: supply.minted + baseToWei(rewardBase), burned: supply.burned + baseToWei(burnedBase) });
  }
  return { included, dropped, feesBase, burnedBase, rewardBase };
}
