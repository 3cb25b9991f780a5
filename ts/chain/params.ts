import { type LedgerParams, BASE_PER_COIN } from '../ledger/index.js';
import type { HardforkActivation } from './evm-hardfork.js';

/** Heights at which behaviour changes; a genesis setting. */
export interface ActivationHeights {
  dposBft: number;
  evm: number;
  rewardV2: number;
  tokenomicsV2: number;
  nft: number;
}

export interface GenesisValidator {
  address: string;
  /** 130 hex, uncompressed; lets peers verify block signatures. */
  public_key: string;
  name: string;
  /** Initial self-stake in base units (genesis `validators[].stake`), bonded at genesis; absent: none. */
  stake?: bigint;
}

export interface ChainParams {
  network: 'mainnet' | 'testnet' | 'dev';
  chainId: number;
  genesisTimestamp: number;
  activation: ActivationHeights;
  validators: GenesisValidator[];
  /** address -> balance in base units */
  alloc: Map<string, bigint>;
  /** EVM hardfork from genesis (@ethereumjs name; genesis `evm_hardfork`, evm-hardfork.ts). */
  evmHardfork: string;
  /** Later changes of EVM hardfork by activation height, in height order (evmHardforkAt reads both). */
  evmHardforkSchedule?: readonly HardforkActivation[];
  /** Blocks per epoch (genesis `epoch_length`, default DEFAULT_EPOCH_LENGTH). */
  epochLength: number;
  /** Dev chain only (`--allow-unlimited-contract-size`, not a genesis field): the EVM has no code size limits. */
  unlimitedContractSize?: boolean;
  /** Dev chain only (`--gas-limit`, not a genesis field): the block gas limit in place of 30M. */
  blockGasLimit?: bigint;
  /** Genesis admin address (genesis `admin`): may add PoA authorities (POST /validators); default: the first validator. */
  admin?: string;
}

/** One hour of 1 s blocks. */
export const DEFAULT_EPOCH_LENGTH = 3600;

export const MAINNET_CHAIN_ID = 7119;
export const TESTNET_CHAIN_ID = 7120;

export const PRESET_ACTIVATION: Record<'mainnet' | 'testnet' | 'dev', ActivationHeights> = {
  mainnet: { dposBft: 579047, evm: 579047, rewardV2: 590100, tokenomicsV2: 640800, nft: 579047 + 6 * 7 * 86400 },
  // The spec gives testnet DPoS+BFT (10) and EVM (752); the later forks follow DPoS on testnet (docs/networks.md).
  testnet: { dposBft: 10, evm: 752, rewardV2: 10, tokenomicsV2: 10, nft: 752 },
  dev: { dposBft: 0, evm: 0, rewardV2: 0, tokenomicsV2: 0, nft: 0 },
};

export const DEFAULT_API_PORT: Record<'mainnet' | 'testnet' | 'dev', number> = { mainnet: 8545, testnet: 9545, dev: 8545 };

export const DEV_ACCOUNT_BALANCE_BASE = 10_000n * BASE_PER_COIN;
/** Dev mnemonic accounts a dev chain funds and signs for (`--dev-accounts`; anvil's and Hardhat's 10). */
export const DEFAULT_DEV_ACCOUNTS = 10;

const ledgerCache = new WeakMap<ChainParams, LedgerParams>();
/** The chain parameters the ledger's operation modules read (one object per ChainParams). */
export function ledgerParams(params: ChainParams): LedgerParams {
  let l = ledgerCache.get(params);
  if (!l) {
    l = {
      activation: { ...params.activation },
      epochLength: params.epochLength,
      admin: params.admin ?? params.validators[0]?.address ?? null,
      authorities: params.validators.map((v) => ({ address: v.address, name: v.name, public_key: v.public_key })),
    };
    ledgerCache.set(params, l);
  }
  return l;
}
