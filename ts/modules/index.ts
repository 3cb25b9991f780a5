/**
 * The door of ts/modules/: the native modules (tokens, staking, nft, …) and the kit they are built with.
 * What it owns and what it may import: docs/architecture.md. Re-exports are added here as other folders need them.
 */
export * from './kit/units.js';
export { type NativeEvent, eventsRlpItem, eventsFromRlpItem, encodeEvents, decodeEvents } from './kit/events.js';
export {
  type LedgerActivation,
  type LedgerParams,
  type OperationEnv,
  OperationFailed,
  type OperationTx,
  type NativeOperation,
  type OperationFields,
  type OperationCall,
} from './kit/context.js';
export {
  type OperationFamily,
  MAX_U128,
  U64,
  TOKEN_CONTRACT_RE,
  NFT_COLLECTION_RE,
  type FieldSpec,
  type VariantSpec,
  type OperationTable,
  type MessageOf,
  OperationDecodeError,
  badOperation,
  decodeField,
  checked,
  checkMessage,
  uint,
  text,
  address,
  addressOrEmpty,
  addressOrNull,
  token,
  collection,
  bool,
} from './kit/spec.js';
export {
  type Handler,
  type HandlerMap,
  type StateScan,
  type Invariant,
  type NativeModule,
  defineModule,
  applyWith,
} from './kit/module.js';
export * from './tokens/index.js';
export * from './nft/index.js';
export { type Supply, getSupply, putSupply, MAX_SUPPLY_V1_COIN, MAX_SUPPLY_V2_COIN, maxSupplyBase } from './kit/supply.js';
export {
  TREASURY_ADDRESS,
  INITIAL_BLOCK_REWARD_BASE,
  HALVING_INTERVAL,
  scheduledReward,
  blockReward,
} from './kit/rewards.js';
export * from './staking/index.js';
