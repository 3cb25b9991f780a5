import type { Chain } from '../chain/chain.js';
import { checkTransactionIntegrity, type SignedTransaction } from '../ledger/transaction.js';
import { Capability, type TypedTransaction } from '@ethereumjs/tx';
import {
  BASE_FEE_PER_GAS,
  BLOCK_GAS_LIMIT,
  chainCommon,
  decodeRawTransaction,
  evmToSignedTransaction,
  maxPricePerGas,
  rememberTypedTransaction,
} from '../execution/index.js';
import { MIN_TX_FEE_BASE, WEI_PER_BASE, baseToWei } from '../ledger/units.js';
import { getAccount } from '../state/accounts.js';
import { EvmNotActiveError, InvalidParamsError, InvalidTransactionError } from '../util/errors.js';
import { fromHex } from '../util/hex.js';
import type { Mempool } from './mempool.js';
import { SignatureBatcher } from './signature-batcher.js';

/** Every reason admission reports (metrics pre-set a counter per reason). */
export const REJECT_REASONS = [
  'chain_id',
  'integrity',
  'signature',
  'amount',
  'fee',
  'duplicate',
  'sender_limit',
  'pool_full',
  'nonce',
  'balance',
  'data',
  'gas',
] as const;
export type RejectReason = (typeof REJECT_REASONS)[number];

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
    this.checkPoolRules(tx, baseToWei(tx.amount + tx.fee));
  }

  /**
   * An Ethereum raw transaction (eth_sendRawTransaction): decoded, sender recovered from the
   * signature, chain id and gas rules checked, then the same nonce/limit/balance rules as native
   * transactions (one nonce sequence per account). Returns the stored form.
   */
  async submitRaw(raw: Uint8Array): Promise<SignedTransaction> {
    try {
      return this.admitRaw(raw);
    } catch (err) {
      if (err instanceof RejectedTransactionError) this.onReject?.(err.reason);
      throw err;
    }
  }

  private admitRaw(raw: Uint8Array): SignedTransaction {
    const params = this.chain.params;
    if (this.chain.height + 1 < params.activation.evm) throw new EvmNotActiveError();
    let typed: TypedTransaction;
    try {
      typed = decodeRawTransaction(raw, chainCommon(params.chainId, params.evmHardfork));
    } catch (err) {
      const msg = (err as Error).message.split(' (')[0];
      // A well-formed transaction for another chain is a rejection like the other admission rules (-32603).
      if (msg.startsWith('invalid chain id')) throw reject('chain_id', `Invalid transaction: ${msg}`);
      throw new InvalidParamsError(`invalid raw transaction: ${msg}`);
    }
    if (!typed.isSigned()) throw reject('signature', 'Invalid transaction: transaction is not signed');
    if (typed.type === 0 && !typed.supports(Capability.EIP155ReplayProtection)) {
      throw reject('chain_id', 'Invalid transaction: only replay-protected (EIP-155) transactions are accepted');
    }
    let tx: SignedTransaction;
    try {
      tx = evmToSignedTransaction(typed, raw, Math.floor(Date.now() / 1000));
    } catch {
      throw reject('signature', 'Invalid transaction: invalid signature');
    }
    if (typed.gasLimit > BLOCK_GAS_LIMIT) throw reject('gas', `Invalid transaction: exceeds block gas limit ${BLOCK_GAS_LIMIT}`);
    const intrinsic = typed.getIntrinsicGas();
    if (typed.gasLimit < intrinsic)
      throw reject('gas', `Invalid transaction: intrinsic gas too low: have ${typed.gasLimit}, want ${intrinsic}`);
    if (maxPricePerGas(typed) < BASE_FEE_PER_GAS) {
      throw reject('fee', `Invalid transaction: max fee per gas ${maxPricePerGas(typed)} below the base fee ${BASE_FEE_PER_GAS}`);
    }
    this.checkPoolRules(tx, typed.value + typed.gasLimit * maxPricePerGas(typed));
    rememberTypedTransaction(tx, typed);
    this.mempool.add(tx);
    return tx;
  }

  /** Pool-wide rules shared by native and EVM transactions; cost is the worst-case spend in wei. */
  private checkPoolRules(tx: SignedTransaction, costWei: bigint): void {
    if (this.mempool.has(tx.txid)) throw reject('duplicate', 'Invalid transaction: already in mempool');
    const pending = this.mempool.pendingOf(tx.from_address);
    if (pending.length >= this.mempool.limits.maxPerSender) {
      throw reject('sender_limit', 'Invalid transaction: too many pending transactions from this sender');
    }
    const account = getAccount(this.chain.state, tx.from_address);
    const expected = account.nonce + BigInt(pending.length);
    if (tx.nonce !== expected) throw reject('nonce', `Invalid nonce: expected ${expected}, got ${tx.nonce}`);
    if (this.mempool.size >= this.mempool.limits.maxTotal) throw reject('pool_full', 'Invalid transaction: mempool is full');
    const available = account.balance - baseToWei(this.mempool.pendingSpend(tx.from_address));
    if (available < costWei) {
      throw reject(
        'balance',
        `Invalid transaction: insufficient balance: available ${available / WEI_PER_BASE}, required ${(costWei + WEI_PER_BASE - 1n) / WEI_PER_BASE} (base units)`,
      );
    }
  }
}
