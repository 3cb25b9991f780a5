import {
  readGenesisFile,
  type ChainParams,
  DEFAULT_EPOCH_LENGTH,
  DEV_ACCOUNT_BALANCE_BASE,
  PRESET_ACTIVATION,
} from '../chain/index.js';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic } from '../ledger/index.js';
import { toHex } from '../util/index.js';
import type { NodeConfig } from './config.js';

/**
 * Chain parameters for this node: from a genesis file when given; otherwise the network preset
 * with this node's key as the single authority (dev: plus the 10 funded mnemonic accounts).
 */
export function chainParamsFor(config: NodeConfig, validator: KeyPair): ChainParams {
  if (config.genesisFile) {
    const p = readGenesisFile(config.genesisFile);
    return p;
  }
  const alloc = new Map<string, bigint>();
  if (config.network === 'dev') {
    for (let i = 0; i < 10; i++) alloc.set(keyPairFromMnemonic(DEV_MNEMONIC, i).address, DEV_ACCOUNT_BALANCE_BASE);
  }
  return {
    network: config.network,
    chainId: config.chainId,
    genesisTimestamp: Math.floor(Date.now() / 1000),
    activation: PRESET_ACTIVATION[config.network],
    validators: [{ address: validator.address, public_key: toHex(validator.publicKey), name: config.nodeName }],
    alloc,
    evmHardfork: 'prague',
    epochLength: DEFAULT_EPOCH_LENGTH,
  };
}
