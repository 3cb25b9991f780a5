import type { Chain } from '../chain/chain.js';
import { checkTransactionIntegrity, type SignedTransaction } from '../ledger/transaction.js';
import { MIN_TX_FEE_BASE, WEI_PER_BASE } from '../ledger/units.js';
import { getAccount } from '../state/accounts.js';
import { InvalidTransactionError } from '../util/errors.js';
import { fromHex } from '../util/hex.js';
import type { Mempool } from './mempool.js';
import { SignatureBatcher } from './signature-batcher.js';

export type RejectReason =
  | 'chain_id'
  | 'integrity'
  | 'signature'
  | 'amount'
  | 'fee'
  | 'duplicate'
  | 'sender_limit'
  | 'pool_full'
  | 'nonce'
  | 'balance'
  | 'data';

export class RejectedTransactionError extends InvalidTransactionError {
  constructor(
    message: string,
    readonly reason: RejectReason,
  ) {
    super(message);
  }
}

const reject = (reason: RejectReason, message: string): RejectedTransactionError => new RejectedTransactionError(message, reason);

/**
 * The one entrance to the mempool for native transactions (REST, JSON-RPC, later P2P gossip):
 * stateless checks, batched signature verification, then the stateful rules against state + pool.
 * A rejected transaction never touches the pool.
 */
export class TxAdmission {
  private readonly batcher = new SignatureBatcher();
  onReject?: (reason: RejectReason) => void;

  constructor(
    private readonly chain: Chain,
    private readonly mempool: Mempool,
  ) {}

  async submit(tx: SignedTransaction): Promise<void> {
    try {
      await this.admit(tx);
    } catch (err) {
      if (err instanceof RejectedTransactionError) this.onReject?.(err.reason);
      else if (err instanceof InvalidTransactionError) this.onReject?.('integrity');
      throw err;
    }
  }

  private async admit(tx: SignedTransaction): Promise<void> {
    if (tx.data !== '') throw reject('data', 'Invalid transaction: data must be empty for a native transfer');
    const digest = checkTransactionIntegrity(tx, this.chain.params.chainId);
    const ok = await this.batcher.verify(fromHex(tx.signature), digest, fromHex(tx.public_key));
    if (!ok) throw reject('signature', 'Invalid transaction: signature verification failed');
    this.checkStateful(tx);
    this.mempool.add(tx);
  }

  /** Rules that depend on state and pool; run synchronously right before insertion. */
  private checkStateful(tx: SignedTransaction): void {
    if (tx.amount <= 0n) throw reject('amount', 'Invalid transaction: amount must be > 0 (unless token/EVM operation)');
    if (tx.fee < MIN_TX_FEE_BASE) {
      throw reject('fee', `Invalid transaction: fee must be at least ${MIN_TX_FEE_BASE} base units (MIN_TX_FEE)`);
    }
    if (this.mempool.has(tx.txid)) throw reject('duplicate', 'Invalid transaction: already in mempool');
    const pending = this.mempool.pendingOf(tx.from_address);
    if (pending.length >= this.mempool.limits.maxPerSender) {
      throw reject('sender_limit', 'Invalid transaction: too many pending transactions from this sender');
    }
    const account = getAccount(this.chain.state, tx.from_address);
    const expected = account.nonce + BigInt(pending.length);
    if (tx.nonce !== expected) throw reject('nonce', `Invalid nonce: expected ${expected}, got ${tx.nonce}`);
    if (this.mempool.size >= this.mempool.limits.maxTotal) throw reject('pool_full', 'Invalid transaction: mempool is full');
    const available = account.balance / WEI_PER_BASE - this.mempool.pendingSpend(tx.from_address);
    const need = tx.amount + tx.fee;
    if (available < need) {
      throw reject('balance', `Invalid transaction: insufficient balance: available ${available}, required ${need}`);
    }
  }
}
