/**
 * The door of ts/chain/: the only file other folders import from it (with interface.ts where it has one).
 * What it owns and what it may import: docs/architecture.md. Re-exports are added here as other folders need them.
 */
export type { LogSource, TxLocation } from './block-store.js';
export {
  type Block,
  blockSummary,
  BFT_HEADER_VERSION,
  decodeBlock,
  encodeBlock,
  blockHeightOf,
  blockHash,
  headerOf,
  txMerkleRoot,
  EMPTY_BLOOM_HEX,
  evidenceHash,
  lastCommitHash,
  receiptsRootOf,
} from './block.js';
export { Chain } from './chain.js';
export { applyGenesisAlloc } from './genesis-state.js';
export { checkedOf } from './validate-block.js';
export { type ChainEvents, NoSuchHeightError, StaleExecutionError } from './chain-types.js';
export { EventIndex } from './event-index.js';
export {
  type DoubleSignEvidence,
  EVIDENCE_MAX_AGE_BLOCKS,
  MAX_EVIDENCE_PER_BLOCK,
  decodeEvidence,
  encodeEvidence,
  evidenceId,
  evidenceProblem,
  doubleSignEvidence,
} from './evidence.js';
export { readGenesisFile, genesisIdentity, writeGenesisFile, genesisText, parseGenesis } from './genesis.js';
export {
  decodeJustification,
  PRECOMMIT,
  PREVOTE,
  type Vote,
  type VoteType,
  isMoreThanFaulty,
  isQuorum,
  verifyVote,
  encodeJustification,
  justificationProblem,
  proposalDigest,
  voteDigest,
} from './justification.js';
export {
  type ChainParams,
  type GenesisValidator,
  ledgerParams,
  DEFAULT_API_PORT,
  MAINNET_CHAIN_ID,
  TESTNET_CHAIN_ID,
  DEFAULT_EPOCH_LENGTH,
  DEV_ACCOUNT_BALANCE_BASE,
  PRESET_ACTIVATION,
  DEFAULT_DEV_ACCOUNTS,
} from './params.js';
export {
  validatorSetAt,
  epochEnd,
  epochOf,
  epochStart,
  proposerAt,
  type ActiveValidator,
  totalPower,
  consensusPhaseAt,
  phaseOfSet,
} from './schedule.js';
export { forgetVerifiedAhead, publicKeyBytes } from './signature-checks.js';
export { EARLIEST_BLOCK_KEY, hasChainHead, readEarliestBlock, writeSnapshotHead } from './snapshot-head.js';
export {
  HistoricalStateView,
  HistoryUnavailableError,
  StaleStateViewError,
  type HistoryRetention,
  parseHistoryRetention,
} from './state-history.js';
export {
  DEFAULT_CHECKPOINT_EVERY_BLOCKS,
  TRIE_CHECKPOINT_FILE,
  checkpointMeta,
  trieCheckpointsSupported,
} from './trie-checkpoint.js';
export { type CheckedBlock, InvalidBlockError } from './validate-block.js';
export { type ChainValidation, validateChain } from './validate.js';
export type { VerifiedAhead } from './verify-ahead.js';
export { readDevPatch, devPatchKey } from './dev-patches.js';
export {
  evmHardforkAt,
  checkEvmHardfork,
  LEGACY_EVM_HARDFORK,
  NEW_CHAIN_EVM_HARDFORK,
  blockGasLimitOf,
  transactionGasCap,
} from './evm-hardfork.js';
