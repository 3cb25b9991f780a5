/**
 * The door of ts/ledger/: the only file other folders import from it (with interface.ts where it has one).
 * What it owns and what it may import: docs/architecture.md. Re-exports are added here as other folders need them.
 */
export { type NativeEvent, eventsFromRlpItem, eventsRlpItem } from './events.js';
export {
  applyNativeTransaction,
  endBlock,
  applyDoubleSign,
  eventIndexTerms,
  operationFailure,
  NATIVE_MODULES,
  moduleOf,
  invariantViolations,
} from './executor.js';
export {
  type KeyPair,
  signDigest,
  addressFromPublicKey,
  DEV_MNEMONIC,
  keyPairFromMnemonic,
  keyPairFromPrivate,
  privateKeyHex,
  randomKeyPair,
} from './keys.js';
export type { LedgerParams, OperationEnv } from './operation-context.js';
export { type NativeOperation, type OperationName, TOKEN_CONTRACT_RE, decodeOperation, NFT_COLLECTION_RE } from './operations.js';
export { TREASURY_ADDRESS, blockReward, scheduledReward } from './rewards.js';
export {
  TxRuleError,
  type NativeRuleContext,
  checkNativeTransaction,
  operationActivation,
  isLowS,
  isSignatureVerified,
  markSignatureVerified,
  NotActiveError,
  TX_RULES,
  type TxRule,
  checkNonceAndBalance,
  STAKING_NOT_ACTIVE,
  TOKENS_NOT_ACTIVE,
  minimumFee,
} from './rules.js';
export {
  hasBondedActiveSet,
  MIN_BFT_VALIDATORS,
  activeSetInForceAt,
  getPoaSet,
  applyGenesisStakes,
  getValidator,
  parseDelegationKey,
  parseUnbondingKey,
  MAX_COMMISSION_BPS,
  MIN_SELF_STAKE_BASE,
  SIGNED_BLOCKS_WINDOW,
  type ValidatorRecord,
  delegatorValidators,
  getActiveSet,
  getDelegation,
  getEpochStats,
  getPool,
  getSigningInfo,
  getTotals,
  getUnbondingShares,
  pendingReward,
  registry,
  sharesValue,
  type EpochReward,
  type RewardSegment,
  commissionByEpoch,
  delegationRewardsByEpoch,
  openSegments,
  rewardsPaid,
  segmentOfEvent,
  segmentReward,
  slashSettlements,
} from './staking/index.js';
export { delegationKey, unbondingKey } from './staking/state.js';
export { getSupply, maxSupplyBase, putSupply } from './supply.js';
export {
  type SignedTransaction,
  decodeTransaction,
  decodeTransactionFields,
  encodeTransaction,
  transactionFields,
  parseSignedTransaction,
  signTransaction,
  TransactionShapeError,
  TX_TYPE_NATIVE,
  TX_TYPE_EVM,
} from './transaction.js';
export { EVM_DATA_PREFIX, isEvmTransaction, txKind } from './tx-kind.js';
export {
  WEI_PER_BASE,
  ZERO_ADDRESS,
  NATIVE_TX_GAS,
  baseToWei,
  weiToBase,
  weiToBaseCeil,
  baseToNative,
  BASE_PER_COIN,
  MIN_TX_FEE_BASE,
  COIN_TICKER,
  formatBase,
  formatWei,
  WEI_PER_COIN,
  BASE_DECIMALS,
} from './units.js';
