/**
 * The rules a native transaction must satisfy, written once and called by both mempool admission and
 * block validation (chain/validate-block.ts), so a transaction the pool refuses can never be valid in a
 * block and the reverse. EVM transactions have their own stateless rules in execution/evm-rules.ts and
 * share the nonce/balance rule below.
 */
import { InvalidTransactionError, NodeError, fromHex, toHex } from '../util/index.js';
import { addressFromPublicKey } from './keys.js';
import { type LedgerParams, MIN_TX_FEE_BASE, weiToBase, weiToBaseCeil } from '../modules/index.js';
import { OperationDecodeError, type OperationName } from './operations.js';
import { type SignedTransaction, signingDigest } from './transaction.js';
import { type TxKind, isOperationEnvelope, txKind } from './tx-kind.js';

/** Every rule a transaction can break (metrics keep a counter per reason; block validity names it). */
export const TX_RULES = [
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
  'timestamp',
  'replacement',
  'not_active',
  'operation',
] as const;
export type TxRule = (typeof TX_RULES)[number];

/**
 * A transaction breaks a rule (a mempool rejection to every transport). A full pool is worth retrying later
 * (RESOURCE_EXHAUSTED); every other rule is about the transaction itself.
 */
export class TxRuleError extends InvalidTransactionError {
  constructor(
    message: string,
    readonly reason: TxRule,
  ) {
    super(message, reason === 'pool_full' ? 'RESOURCE_EXHAUSTED' : 'INVALID_ARGUMENT');
  }
}

/** A well-formed request for a module this chain does not run yet (at this height): the spec's "not active yet". */
export class NotActiveError extends NodeError {
  readonly reason = 'not_active' as const;
  constructor(message: string) {
    super(message, 'FAILED_PRECONDITION');
  }
}

export const TOKENS_NOT_ACTIVE = 'token operations are not active on this chain yet';
export const STAKING_NOT_ACTIVE = 'staking is not active yet: it starts at the DPoS activation height';
export const AUTHORITY_SET_CLOSED =
  'the PoA authority set is closed from the DPoS activation height: register with a signed RegisterValidator';
export const NFT_NOT_ACTIVE = 'NFT operations are not active on this chain yet';

const reject = (reason: TxRule, message: string): TxRuleError => new TxRuleError(message, reason);

/**
 * How far ahead of the checker's clock a transaction may be dated: the node's clock at admission,
 * the block's timestamp in a block. Past timestamps are allowed: nonces, not dates, prevent replay,
 * and a transaction signed offline may be submitted later (Ethereum transactions carry no date at all).
 */
export const MAX_TX_FUTURE_DRIFT_S = 300;

/** secp256k1 group order / 2: signatures must be low-S (as Ethereum requires since EIP-2). */
const HALF_N = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0n;

export function isLowS(sig64: Uint8Array): boolean {
  if (sig64.length !== 64) return false;
  return BigInt(`0x${toHex(sig64.subarray(32))}`) <= HALF_N;
}

/** Which native operation families (and, where a family's operations differ, which operations) run at a height. */
export interface OperationActivation {
  token: (height: number, op: OperationName) => boolean;
  staking: (height: number, op: OperationName) => boolean;
  nft: (height: number, op: OperationName) => boolean;
}

export const NO_OPERATIONS_ACTIVE: OperationActivation = { token: () => false, staking: () => false, nft: () => false };

/**
 * The operation families a chain runs, by height. A family is off until its module exists (its issue
 * switches it on here, at its activation height), so no node ever accepts an operation it cannot execute.
 */
export function operationActivation(ledger: LedgerParams): OperationActivation {
  // Asked once per transaction of a block: one table per parameters object.
  const hit = activationCache.get(ledger);
  if (hit) return hit;
  const dpos = ledger.activation.dposBft;
  const table: OperationActivation = {
    ...NO_OPERATIONS_ACTIVE,
    // SRC-20 tokens run from genesis: they need no consensus change, and the spec lists token deploys in
    // every phase (docs/tokens-and-staking.md).
    token: () => true,
    // Staking from the DPoS activation height; the genesis admin's PoA authority additions only before it.
    staking: (height, op) => (op === 'AddAuthority' ? height < dpos : height >= dpos),
    // SRC-721 NFTs from their own activation height (docs/nft.md).
    nft: (height) => height >= ledger.activation.nft,
  };
  activationCache.set(ledger, table);
  return table;
}
const activationCache = new WeakMap<LedgerParams, OperationActivation>();

export interface NativeRuleContext {
  chainId: number;
  /** Height the transaction would be included at. */
  height: number;
  /** Unix seconds: the node's clock at admission, the block's timestamp in a block. */
  now: number;
  operations: OperationActivation;
}

/**
 * Minimum fee of each native operation in tenths of MIN_TX_FEE (base units): deploys cost 10x; the
 * spec's NFT table gives 0.5x for approvals and base-URI updates, and 0 for a freeze, which we raise to
 * 1x (a free operation would let anyone fill blocks for nothing; docs/operations.md).
 */
const OPERATION_FEE_TENTHS: Record<OperationName, bigint> = {
  Deploy: 100n,
  Transfer: 10n,
  Burn: 10n,
  Mint: 10n,
  Approve: 10n,
  TransferFrom: 10n,
  RegisterValidator: 10n,
  Delegate: 10n,
  Undelegate: 10n,
  Redelegate: 10n,
  ClaimRewards: 10n,
  UpdateCommission: 10n,
  Unjail: 10n,
  AddAuthority: 10n,
  DeployNft: 100n,
  MintNft: 10n,
  TransferNft: 10n,
  BurnNft: 10n,
  ApproveNft: 5n,
  ApproveNftOperator: 5n,
  UpdateNftBaseUri: 5n,
  FreezeNftCollection: 10n,
};

/** The same in base units, computed once (every transaction of a block asks). */
const OPERATION_MIN_FEE = Object.fromEntries(
  Object.entries(OPERATION_FEE_TENTHS).map(([name, tenths]) => [name, (tenths * MIN_TX_FEE_BASE) / 10n]),
) as Record<OperationName, bigint>;

/** Minimum fee of a native transaction by kind (base units). */
export function minimumFee(kind: TxKind): bigint {
  if (kind.kind === 'token' || kind.kind === 'staking' || kind.kind === 'nft') return OPERATION_MIN_FEE[kind.op.name];
  return MIN_TX_FEE_BASE;
}

/** The context-free part of the rules, remembered per transaction object (admission, production and validation share it). */
const staticChecks = new WeakMap<SignedTransaction, { kind: TxKind; digest: Uint8Array }>();

/**
 * The stateless rules except the signature itself (verified in batches by the caller): chain id,
 * canonical addresses, txid = signing digest, public key derives to from_address, low-S, the kind's
 * amount/recipient/data/fee rules, activation of the kind, timestamp drift. Returns the kind and the
 * digest to verify the signature against. The hashing part runs once per transaction object.
 */
export function checkNativeTransaction(tx: SignedTransaction, ctx: NativeRuleContext): { kind: TxKind; digest: Uint8Array } {
  let checked = staticChecks.get(tx);
  if (!checked || tx.chain_id !== ctx.chainId) {
    checked = checkStatic(tx, ctx.chainId);
    staticChecks.set(tx, checked);
  }
  const { kind } = checked;
  if (kind.kind !== 'transfer' && kind.kind !== 'evm' && !ctx.operations[kind.kind](ctx.height, kind.op.name)) {
    throw new NotActiveError(
      kind.kind === 'token'
        ? TOKENS_NOT_ACTIVE
        : kind.kind === 'nft'
          ? NFT_NOT_ACTIVE
          : kind.op.name === 'AddAuthority'
            ? AUTHORITY_SET_CLOSED
            : STAKING_NOT_ACTIVE,
    );
  }
  const minFee = minimumFee(kind);
  if (tx.fee < minFee) throw reject('fee', `Invalid transaction: fee must be at least ${minFee} base units (MIN_TX_FEE)`);
  if (tx.timestamp > ctx.now + MAX_TX_FUTURE_DRIFT_S) {
    throw reject(
      'timestamp',
      `Invalid transaction: timestamp ${tx.timestamp} is more than ${MAX_TX_FUTURE_DRIFT_S} s ahead of ${ctx.now}`,
    );
  }
  return checked;
}

function checkStatic(tx: SignedTransaction, chainId: number): { kind: TxKind; digest: Uint8Array } {
  const digest = checkIntegrity(tx, chainId);
  // Data is allowed only on a native operation (zero address, amount 0).
  if (tx.data !== '' && !isOperationEnvelope(tx))
    throw reject('data', 'Invalid transaction: data must be empty for a native transfer');
  let kind: TxKind;
  try {
    kind = txKind(tx);
  } catch (err) {
    if (err instanceof OperationDecodeError) throw reject('data', err.message);
    throw err;
  }
  if (kind.kind === 'evm') throw reject('integrity', 'Invalid transaction: EVM transaction in native form');
  if (kind.kind === 'transfer' && tx.amount <= 0n) {
    throw reject('amount', 'Invalid transaction: amount must be > 0 (unless token/EVM operation)');
  }
  return { kind, digest };
}

/** Chain id, canonical addresses, txid = digest, key -> address, low-S. */
export function checkIntegrity(tx: SignedTransaction, chainId: number): Uint8Array {
  if (tx.chain_id !== chainId)
    throw reject('chain_id', `Invalid transaction: wrong chain_id: expected ${chainId}, got ${tx.chain_id}`);
  // The signing payload uses the addresses as submitted; accept only the canonical lowercase form.
  if (tx.from_address !== tx.from_address.toLowerCase() || tx.to_address !== tx.to_address.toLowerCase()) {
    throw reject('integrity', 'Invalid transaction: addresses must be lowercase hex');
  }
  const digest = signingDigest(tx);
  if (toHex(digest) !== tx.txid) throw reject('integrity', 'Invalid transaction: txid does not match the signing digest');
  if (!/^04[0-9a-f]{128}$/.test(tx.public_key) || addressFromPublicKey(fromHex(tx.public_key)) !== tx.from_address) {
    throw reject('integrity', 'Invalid transaction: public_key does not derive to from_address');
  }
  if (!isLowS(fromHex(tx.signature))) throw reject('signature', 'Invalid transaction: signature must be low-S (s <= n/2)');
  return digest;
}

/** Transactions whose signature was verified (admission or an earlier block check): never verified twice. */
const signatureVerified = new WeakSet<SignedTransaction>();
export const markSignatureVerified = (tx: SignedTransaction): void => void signatureVerified.add(tx);
export const isSignatureVerified = (tx: SignedTransaction): boolean => signatureVerified.has(tx);

/**
 * The nonce and balance rule, shared by the pool (expected = state nonce + pending) and a block
 * (expected = the nonce in the state being built). costWei is the worst-case spend.
 */
export function checkNonceAndBalance(tx: SignedTransaction, expectedNonce: bigint, availableWei: bigint, costWei: bigint): void {
  if (tx.nonce !== expectedNonce) throw reject('nonce', `Invalid nonce: expected ${expectedNonce}, got ${tx.nonce}`);
  if (availableWei < costWei) {
    throw reject(
      'balance',
      `Invalid transaction: insufficient balance: available ${weiToBase(availableWei)}, required ${weiToBaseCeil(costWei)} (base units)`,
    );
  }
}
