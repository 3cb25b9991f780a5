import { type Chain, evmHardforkAt } from '../chain/index.js';
import { Capability } from '@ethereumjs/tx';
import {
  MalformedRawTransactionError,
  chainCommon,
  checkEvmGasRules,
  decodeSignedEvmTransaction,
  isEvmTransaction,
  markEvmChecked,
  maxPricePerGas,
  operationEnv,
  storedEvmTransaction,
  typedTransactionOf,
} from '../execution/index.js';
import {
  NotActiveError,
  TX_RULES,
  type TxRule,
  TxRuleError,
  checkNativeTransaction,
  checkNonceAndBalance,
  isSignatureVerified,
  markSignatureVerified,
  operationFailure,
  type SignedTransaction,
  baseToWei,
} from '../ledger/index.js';
import { getAccount } from '../state/index.js';
import { EvmNotActiveError, InvalidParamsError, InvalidTransactionError, fromHex } from '../util/index.js';
import type { SubmitOptions as SubmitRawOptions, SubmitSource as TxSource, TxSubmitter } from './interface.js';
import type { Mempool, MempoolContents } from './mempool.js';
import { SignatureBatcher } from './signature-batcher.js';

/** Every reason admission reports (metrics pre-set a counter per reason). */
export const REJECT_REASONS = TX_RULES;
export type RejectReason = TxRule;
/** A refused transaction; `reason` names the rule (the rule set lives in ledger/rules.ts). */
export { TxRuleError as RejectedTransactionError } from '../ledger/index.js';

const reject = (reason: TxRule, message: string): TxRuleError => new TxRuleError(message, reason);

export type { SubmitSource as TxSource, SubmitOptions as SubmitRawOptions } from './interface.js';

/** A replacement must raise the fee by at least this many percent (geth's price bump). */
export const REPLACEMENT_BUMP_PERCENT = 10n;

/**
 * The one entrance to the mempool (REST, JSON-RPC, later P2P gossip): the transaction rules of
 * ledger/rules.ts and execution/evm-rules.ts (the same ones block validation runs), batched
 * signature verification, then the pool rules (duplicates, bounds, nonce, balance, replacement,
 * future-nonce queue). A rejected transaction never touches the pool.
 */
export class TxAdmission implements TxSubmitter {
  private readonly batcher = new SignatureBatcher();
  onReject?: (reason: RejectReason) => void;
  /** A transaction entered the pool from an API submission (the node gossips it to peers). */
  onAdmitted?: (tx: SignedTransaction) => void;
  /** A transaction entered the pool as pending, from any source (the node's event feed). */
  onPooled?: (tx: SignedTransaction) => void;
  /** The node's clock in Unix seconds (tests move it). */
  now: () => number = () => Math.floor(Date.now() / 1000);
  /** Makes each API admission durable before the submission answers (mempool/tx-journal.ts). */
  journal?: {
    append(tx: SignedTransaction): Promise<void>;
    /** Undo an `append` whose admission then failed (durable once resolved). */
    cancel?(tx: SignedTransaction): Promise<void>;
    reset?(txs: readonly SignedTransaction[]): Promise<void>;
  };

  constructor(
    private readonly chain: Chain,
    private readonly mempool: Mempool,
  ) {}

  /**
   * Admit a native transaction. Resolves to 'pending', or 'queued' for a gossiped future nonce.
   *
   * An API submission is journaled once its cheap checks pass, before its signature is verified: the journal's
   * write runs in the thread pool while this thread verifies the batch's signatures, so the answer rarely waits
   * for the disk. The answer waits for both. If admission then refuses the transaction, a cancel record is made
   * durable before the refusal is answered, so a restart never brings back a refused transaction
   * (docs/storage.md, "Journaled mempool").
   */
  async submit(tx: SignedTransaction, source: TxSource = 'api'): Promise<'pending' | 'queued'> {
    const journal = source === 'api' ? this.journal : undefined;
    let durable: Promise<void> | undefined;
    let admitted = false;
    try {
      const status = await this.admit(tx, source, () => {
        durable = journal?.append(tx);
        durable?.catch(() => undefined); // awaited below; a refusal answers without it
      });
      admitted = true;
      if (source === 'api') {
        await durable;
        this.onAdmitted?.(tx);
      }
      if (status === 'pending') this.onPooled?.(tx);
      return status;
    } catch (err) {
      if (durable && !admitted) await journal?.cancel?.(tx).catch(() => undefined);
      this.report(err);
      throw err;
    }
  }

  private report(err: unknown): void {
    if (err instanceof TxRuleError) this.onReject?.(err.reason);
    else if (err instanceof NotActiveError) this.onReject?.('not_active');
    else if (err instanceof InvalidTransactionError) this.onReject?.('integrity');
  }

  /** `checked`: called once the checks that need no signature passed (the journal's write starts there). */
  private async admit(tx: SignedTransaction, source: TxSource, checked?: () => void): Promise<'pending' | 'queued'> {
    const { digest, kind } = checkNativeTransaction(tx, this.chain.txRuleContext(this.chain.height + 1, this.now()));
    checked?.();
    if (!isSignatureVerified(tx)) {
      const ok = await this.batcher.verify(fromHex(tx.signature), digest, fromHex(tx.public_key));
      if (!ok) throw reject('signature', 'Invalid transaction: signature verification failed');
      markSignatureVerified(tx);
    }
    if (kind.kind !== 'transfer') this.checkOperation(tx);
    return this.checkPoolRules(tx, baseToWei(tx.amount + tx.fee), source);
  }

  /**
   * A native operation that would fail on the current state (after the sender's own pending
   * transactions) is refused with its reason, rather than included as a failed transaction that still
   * costs its fee. What depends on other senders' pending transactions is decided at inclusion.
   */
  private checkOperation(tx: SignedTransaction): void {
    const before = this.mempool.pendingOf(tx.from_address).filter((p) => p.nonce < tx.nonce);
    const env = operationEnv(this.chain.blockEnv(this.chain.height + 1, this.chain.head.validator, this.now()));
    const failure = operationFailure(this.chain.state, before, tx, env);
    if (failure) throw reject('operation', `Invalid transaction: ${failure}`);
  }

  /**
   * An Ethereum raw transaction (eth_sendRawTransaction): decoded, sender recovered from the
   * signature, chain id and gas rules checked, then the same pool rules as native transactions
   * (one nonce sequence per account). Returns the stored form.
   */
  async submitRaw(raw: Uint8Array, source: TxSource = 'api', opts: SubmitRawOptions = {}): Promise<SignedTransaction> {
    try {
      const tx = this.admitRaw(raw, source, opts.impersonated === true);
      if (source === 'api') {
        if (opts.answeredOnceMined !== true) await this.journal?.append(tx);
        this.onAdmitted?.(tx);
      }
      return tx;
    } catch (err) {
      this.report(err);
      throw err;
    }
  }

  /** `impersonated`: the dev chain's own eth_sendTransaction for an address it impersonates (execution/impersonation.ts). */
  private admitRaw(raw: Uint8Array, source: TxSource, impersonated: boolean): SignedTransaction {
    const params = this.chain.params;
    if (this.chain.height + 1 < params.activation.evm) throw new EvmNotActiveError();
    let tx: SignedTransaction;
    try {
      const allow = impersonated && params.network === 'dev';
      const common = chainCommon(params.chainId, evmHardforkAt(params, this.chain.height + 1));
      const typed = decodeSignedEvmTransaction(raw, common, allow);
      tx = storedEvmTransaction(typed, raw, this.now());
      checkEvmGasRules(typed, params.blockGasLimit);
      markEvmChecked(tx);
      if (this.checkPoolRules(tx, typed.value + typed.gasLimit * maxPricePerGas(typed), source) === 'pending')
        this.onPooled?.(tx);
    } catch (err) {
      if (err instanceof MalformedRawTransactionError) throw new InvalidParamsError(err.message);
      throw err;
    }
    return tx;
  }

  /** Pool rules shared by native and EVM transactions; cost is the worst-case spend in wei. */
  private checkPoolRules(tx: SignedTransaction, costWei: bigint, source: TxSource): 'pending' | 'queued' {
    if (this.mempool.has(tx.txid)) throw reject('duplicate', 'Invalid transaction: already in mempool');
    const pending = this.mempool.pendingOf(tx.from_address);
    const account = getAccount(this.chain.state, tx.from_address);
    const expected = account.nonce + BigInt(pending.length);
    if (tx.nonce >= account.nonce && tx.nonce < expected) {
      this.replace(pending[Number(tx.nonce - account.nonce)], tx, costWei, account.balance);
      return 'pending';
    }
    if (tx.nonce > expected && source === 'gossip') {
      if (!this.mempool.enqueue(tx))
        throw reject('sender_limit', 'Invalid transaction: future-nonce queue is full for this sender');
      return 'queued';
    }
    if (pending.length >= this.mempool.limits.maxPerSender) {
      throw reject('sender_limit', 'Invalid transaction: too many pending transactions from this sender');
    }
    if (tx.nonce !== expected) checkNonceAndBalance(tx, expected, 0n, 0n);
    if (this.mempool.size >= this.mempool.limits.maxTotal) throw reject('pool_full', 'Invalid transaction: mempool is full');
    checkNonceAndBalance(tx, expected, account.balance - baseToWei(this.mempool.pendingSpend(tx.from_address)), costWei);
    this.mempool.add(tx);
    this.promote(tx.from_address);
    return 'pending';
  }

  /** Same sender and nonce as a pending transaction: allowed with a fee at least 10% higher (geth's rule). */
  private replace(old: SignedTransaction, tx: SignedTransaction, costWei: bigint, balanceWei: bigint): void {
    if (!bumped(old, tx, this.chain)) {
      throw reject(
        'replacement',
        `Invalid transaction: replacement transaction underpriced: a pending transaction with nonce ${tx.nonce} needs a fee at least ${REPLACEMENT_BUMP_PERCENT}% higher`,
      );
    }
    const spendOthers = baseToWei(this.mempool.pendingSpend(tx.from_address) - old.amount - old.fee);
    checkNonceAndBalance(tx, tx.nonce, balanceWei - spendOthers, costWei);
    this.mempool.replace(old, tx);
  }

  /** Move a sender's queued transactions into pending while their nonces follow on (each re-checked). */
  promote(sender: string): void {
    // Nothing queued (every in-order submission): not even the account read.
    if (!this.mempool.hasQueued(sender)) return;
    for (;;) {
      const account = getAccount(this.chain.state, sender);
      const expected = account.nonce + BigInt(this.mempool.pendingOf(sender).length);
      const tx = this.mempool.dequeue(sender, expected);
      if (!tx) return;
      try {
        const cost = isEvmTransaction(tx) ? evmCostWei(tx, this.chain) : baseToWei(tx.amount + tx.fee);
        if (this.mempool.pendingOf(sender).length >= this.mempool.limits.maxPerSender) return;
        checkNonceAndBalance(tx, expected, account.balance - baseToWei(this.mempool.pendingSpend(sender)), cost);
        this.mempool.add(tx);
      } catch {
        return; // cannot pay now: dropped, as geth drops a queued transaction that cannot be promoted
      }
    }
  }

  /**
   * Put the pool back to earlier contents (the dev chain's evm_revert and anvil_reset, after the chain was
   * rolled back to the state they were admitted against); the journal then holds exactly them, so the
   * transactions of removed blocks do not return at the next start. No pending events: they were announced
   * when first admitted.
   */
  async restorePool(contents: MempoolContents): Promise<void> {
    this.mempool.restore(contents);
    await this.journal?.reset?.(contents.pending);
  }

  /** After a block: promote what the new nonces unblock, drop stale and expired queued entries. */
  onBlock(): void {
    for (const sender of this.mempool.queuedSenders()) {
      this.mempool.pruneQueued(sender, getAccount(this.chain.state, sender).nonce);
      this.promote(sender);
    }
  }
}

function evmCostWei(tx: SignedTransaction, chain: Chain): bigint {
  const typed = typedTransactionOf(tx, chainCommon(chain.params.chainId, chain.params.evmHardfork));
  return typed.value + typed.gasLimit * maxPricePerGas(typed);
}

/** Whether `next` pays enough more than `old` to replace it. EVM-for-EVM compares prices per gas, like geth. */
function bumped(old: SignedTransaction, next: SignedTransaction, chain: Chain): boolean {
  const need = (v: bigint): bigint => (v * (100n + REPLACEMENT_BUMP_PERCENT) + 99n) / 100n;
  if (isEvmTransaction(old) && isEvmTransaction(next)) {
    const common = chainCommon(chain.params.chainId, chain.params.evmHardfork);
    const a = typedTransactionOf(old, common);
    const b = typedTransactionOf(next, common);
    if (maxPricePerGas(b) < need(maxPricePerGas(a))) return false;
    const tip = (t: typeof a): bigint =>
      t.supports(Capability.EIP1559FeeMarket) ? (t as { maxPriorityFeePerGas: bigint }).maxPriorityFeePerGas : maxPricePerGas(t);
    return tip(b) >= need(tip(a));
  }
  return next.fee >= need(old.fee);
}
