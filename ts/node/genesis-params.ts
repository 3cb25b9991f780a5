import {
  readGenesisFile,
  type ChainParams,
  DEFAULT_EPOCH_LENGTH,
  DEV_ACCOUNT_BALANCE_BASE,
  PRESET_ACTIVATION,
  LEGACY_EVM_HARDFORK,
  NEW_CHAIN_EVM_HARDFORK,
  genesisText,
  parseGenesis,
} from '../chain/index.js';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic, BASE_PER_COIN } from '../ledger/index.js';
import { toHex } from '../util/index.js';
import type { NodeConfig } from './config.js';
import { type KvStore, metaKey } from '../storage/index.js';

/**
 * Chain parameters for this node: from a genesis file when given; otherwise the network preset
 * with this node's key as the single authority (dev: plus the funded mnemonic accounts, `--dev-accounts`
 * of `--dev-balance` coins each, on the `--hardfork` EVM, osaka by default).
 */
export function chainParamsFor(config: NodeConfig, validator: KeyPair): ChainParams {
  return { ...presetParams(config, validator), ...devEvmOptions(config) };
}

/** The dev chain's EVM options, which are the node's (its flags), not its genesis'. */
function devEvmOptions(config: NodeConfig): Pick<ChainParams, 'unlimitedContractSize' | 'blockGasLimit'> {
  if (config.network !== 'dev') return {};
  return {
    ...(config.allowUnlimitedContractSize ? { unlimitedContractSize: true } : {}),
    ...(config.gasLimit !== undefined ? { blockGasLimit: config.gasLimit } : {}),
  };
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
    validators: [
      {
        address: validator.address,
        public_key: toHex(validator.publicKey),
        name: config.nodeName,
        // A new dev chain's validator is a staking validator, as a Cosmos SDK genesis transaction makes it: bonded
        // with a self-delegation, so Delegate and Redelegate to it work (docs/tokens-and-staking.md).
        ...(dev ? { stake: DEV_VALIDATOR_STAKE_BASE } : {}),
      },
    ],
    alloc,
    // The mainnet and testnet presets stay as every chain made before the choice existed.
    evmHardfork: dev ? (config.hardfork ?? NEW_CHAIN_EVM_HARDFORK) : LEGACY_EVM_HARDFORK,
    epochLength: DEFAULT_EPOCH_LENGTH,
  };
}

/** Self-stake of a new dev chain's validator (minted at genesis): above the 15,000-coin minimum, so it is active. */
export const DEV_VALIDATOR_STAKE_BASE = 100_000n * BASE_PER_COIN;

/** The genesis of a dev chain made without a genesis file, as its data dir recorded it at its first start. */
const DEV_GENESIS_KEY = metaKey('dev-genesis');
/** The block store's head record: present once a chain was written. */
const HEAD_KEY = metaKey('head');

/** What every dev chain was before its genesis was recorded: ten accounts of 10,000 coins, no stake, prague. */
function legacyDevParams(params: ChainParams): ChainParams {
  const alloc = new Map<string, bigint>();
  for (let i = 0; i < 10; i++) alloc.set(keyPairFromMnemonic(DEV_MNEMONIC, i).address, DEV_ACCOUNT_BALANCE_BASE);
  const validators = params.validators.map(({ stake: _stake, ...v }) => v);
  return { ...params, alloc, validators, evmHardfork: LEGACY_EVM_HARDFORK };
}

/**
 * A dev chain without a genesis file keeps the genesis it was created with (its hardfork, accounts, balances and
 * validator stake), recorded in its data dir at the first start: /chain/validate rebuilds the genesis state from
 * it, and the blocks mean what they meant. A data dir made before the record existed gets the dev genesis of
 * that time (legacyDevParams). `--dev-accounts` and `--dev-balance` shape a new chain only; another
 * `--hardfork` for an existing one is refused.
 */
export async function settleDevGenesis(config: NodeConfig, params: ChainParams, db: KvStore): Promise<ChainParams> {
  if (config.network !== 'dev' || config.genesisFile) return params;
  const stored = await db.get(DEV_GENESIS_KEY);
  let settled: ChainParams;
  if (stored) settled = parseGenesis(stored.toString('utf8'));
  else {
    settled = (await db.get(HEAD_KEY)) ? legacyDevParams(params) : params;
    await db.write([{ type: 'put', key: DEV_GENESIS_KEY, value: Buffer.from(genesisText(settled)) }], { sync: true });
  }
  if (config.hardfork !== undefined && config.hardfork !== settled.evmHardfork) {
    throw new Error(
      `the dev chain in ${config.dataDir} runs the ${settled.evmHardfork} hardfork; --hardfork ${config.hardfork} would change what its blocks mean: start it without --hardfork, or with a new --data-dir`,
    );
  }
  return { ...settled, ...devEvmOptions(config) };
}
