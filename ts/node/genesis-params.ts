import { LEGACY_EVM_HARDFORK, NEW_CHAIN_EVM_HARDFORK } from '../chain/evm-hardfork.js';
import { readGenesisFile } from '../chain/genesis.js';
import { type ChainParams, DEFAULT_EPOCH_LENGTH, PRESET_ACTIVATION } from '../chain/params.js';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic } from '../ledger/keys.js';
import { BASE_PER_COIN } from '../ledger/units.js';
import { type KvStore, metaKey } from '../storage/index.js';
import { toHex } from '../util/hex.js';
import type { NodeConfig } from './config.js';

/**
 * Chain parameters for this node: from a genesis file when given; otherwise the network preset
 * with this node's key as the single authority (dev: plus the funded mnemonic accounts, `--dev-accounts`
 * of `--dev-balance` coins each, on the `--hardfork` EVM, osaka by default).
 */
export function chainParamsFor(config: NodeConfig, validator: KeyPair): ChainParams {
  const params = presetParams(config, validator);
  return config.network === 'dev' && config.allowUnlimitedContractSize ? { ...params, unlimitedContractSize: true } : params;
}

function presetParams(config: NodeConfig, validator: KeyPair): ChainParams {
  if (config.genesisFile) return readGenesisFile(config.genesisFile);
  const alloc = new Map<string, bigint>();
  const dev = config.network === 'dev';
  if (dev) {
    const balance = config.devBalanceCoins * BASE_PER_COIN;
    for (let i = 0; i < config.devAccounts; i++) alloc.set(keyPairFromMnemonic(DEV_MNEMONIC, i).address, balance);
  }
  return {
    network: config.network,
    chainId: config.chainId,
    genesisTimestamp: Math.floor(Date.now() / 1000),
    activation: PRESET_ACTIVATION[config.network],
    validators: [{ address: validator.address, public_key: toHex(validator.publicKey), name: config.nodeName }],
    alloc,
    // The mainnet and testnet presets stay as every chain made before the choice existed.
    evmHardfork: dev ? (config.hardfork ?? NEW_CHAIN_EVM_HARDFORK) : LEGACY_EVM_HARDFORK,
    epochLength: DEFAULT_EPOCH_LENGTH,
  };
}

/** The hardfork a dev chain's data dir was created with (its parameters are not in a genesis file). */
const DEV_HARDFORK_KEY = metaKey('dev-evm-hardfork');
/** The block store's head record: present once a chain was written. */
const HEAD_KEY = metaKey('head');

/**
 * A dev chain without a genesis file keeps the hardfork it was created with: recorded at its first start, and
 * prague for a data dir made before the record existed (every dev chain then ran prague). Another `--hardfork`
 * for an existing dev chain is refused: its blocks would mean something else.
 */
export async function settleDevHardfork(config: NodeConfig, params: ChainParams, db: KvStore): Promise<ChainParams> {
  if (config.network !== 'dev' || config.genesisFile) return params;
  const stored = (await db.get(DEV_HARDFORK_KEY))?.toString('utf8');
  const existing = stored ?? ((await db.get(HEAD_KEY)) ? LEGACY_EVM_HARDFORK : null);
  if (existing !== stored)
    await db.write([{ type: 'put', key: DEV_HARDFORK_KEY, value: Buffer.from(existing ?? params.evmHardfork) }]);
  if (existing === null) return params;
  if (config.hardfork !== undefined && config.hardfork !== existing) {
    throw new Error(
      `the dev chain in ${config.dataDir} runs the ${existing} hardfork; --hardfork ${config.hardfork} would change what its blocks mean: start it without --hardfork, or with a new --data-dir`,
    );
  }
  return existing === params.evmHardfork ? params : { ...params, evmHardfork: existing };
}
