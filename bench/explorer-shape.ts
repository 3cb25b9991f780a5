/**
 * The shape of the explorer bench's large chain: transaction k (0-based, TX_PER_BLOCK per block from height 1)
 * is a transfer from sender k mod senders (nonce k div senders) to recipient k mod recipients, so every block
 * has distinct senders, every sender has a long history and the state holds senders + recipients accounts.
 */
export interface ChainShape {
  blocks: number;
  txPerBlock: number;
  senders: number;
  recipients: number;
  chainId: number;
  /** Unix seconds of block 1 (block b is dated first + b - 1). */
  firstBlockTs: number;
}

/** Recipient i: an address with no key (0x + 40 hex derived from i). */
export const recipientAddress = (i: number): string => `0x${(0xeeee0000 + i).toString(16).padStart(40, 'e')}`;

export function transferAt(s: ChainShape, k: number) {
  const sender = k % s.senders;
  const height = Math.floor(k / s.txPerBlock) + 1;
  return {
    sender,
    from: '',
    to: recipientAddress(k % s.recipients),
    amount: 1_000n + BigInt(k % 1000),
    fee: 10_000n,
    nonce: BigInt(Math.floor(k / s.senders)),
    chain_id: s.chainId,
    timestamp: s.firstBlockTs + height - 1,
  };
}
