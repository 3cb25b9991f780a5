import { readFileSync, writeFileSync } from 'node:fs';
import { sha256 } from '../crypto/index.js';
import { isAddress, toHex, asUint, parseJsonExact, stringifyExact } from '../util/index.js';
import {
  type ActivationHeights,
  type ChainParams,
  DEFAULT_EPOCH_LENGTH,
  type GenesisValidator,
  PRESET_ACTIVATION,
} from './params.js';
import { evmHardforkJson, parseEvmHardfork } from './evm-hardfork.js';

/**
 * Genesis file (JSON):
 * { "chain_id": 7120, "network": "testnet", "timestamp": 1700000000,
 *   "activation": { "dpos_bft": 10, "evm": 752, "reward_v2": 10, "tokenomics_v2": 10, "nft": 752 },
 *   "validators": [{ "address": "0x..", "public_key": "04..", "name": "v1", "stake": 1500000000000 }],
 *   "admin": "0x..",   // optional: the genesis admin (adds PoA authorities); default the first validator
 *   "epoch_length": 3600,
 *   "evm_hardfork": "osaka",   // or { "prague": 0, "osaka": 120000 }; absent: prague (evm-hardfork.ts)
 *   "alloc": { "0x..": 1000000000000 } }   // base units, exact integers
 */
export function readGenesisFile(path: string): ChainParams {
  return parseGenesis(readFileSync(path, 'utf8'));
}

/** The chain parameters of a genesis file's text (readGenesisFile without the file). */
export function parseGenesis(text: string): ChainParams {
  const raw = parseJsonExact(text) as Record<string, unknown>;
  const network = (raw.network ?? 'testnet') as ChainParams['network'];
  if (!['mainnet', 'testnet', 'dev'].includes(network)) throw new Error(`genesis: unknown network ${String(network)}`);
  const chainId = Number(asUint(raw.chain_id, 0xffffffffn) ?? Number.NaN);
  if (!Number.isFinite(chainId)) throw new Error('genesis: chain_id must be an integer');
  const act = (raw.activation ?? {}) as Record<string, unknown>;
  const preset = PRESET_ACTIVATION[network];
  const h = (name: string, def: number): number => {
    const v = act[name];
    return v === undefined ? def : Number(asUint(v, 0xffffffffffffn) ?? def);
  };
  const activation: ActivationHeights = {
    dposBft: h('dpos_bft', preset.dposBft),
    evm: h('evm', preset.evm),
    rewardV2: h('reward_v2', preset.rewardV2),
    tokenomicsV2: h('tokenomics_v2', preset.tokenomicsV2),
    nft: h('nft', preset.nft),
  };
  const validators = ((raw.validators ?? []) as GenesisValidator[]).map((v) => {
    if (!isAddress(v.address) || !/^04[0-9a-f]{128}$/i.test(v.public_key)) throw new Error('genesis: bad validator entry');
    const stake = (v as { stake?: unknown }).stake === undefined ? undefined : asUint((v as { stake?: unknown }).stake);
    if ((v as { stake?: unknown }).stake !== undefined && stake === undefined)
      throw new Error('genesis: validator stake must be an integer');
    return {
      address: v.address.toLowerCase(),
      public_key: v.public_key.toLowerCase(),
      name: String(v.name ?? v.address),
      ...(stake !== undefined ? { stake } : {}),
    };
  });
  const alloc = new Map<string, bigint>();
  for (const [addr, amount] of Object.entries((raw.alloc ?? {}) as Record<string, unknown>)) {
    const v = asUint(amount);
    if (!isAddress(addr) || v === undefined) throw new Error(`genesis: bad alloc entry ${addr}`);
    alloc.set(addr.toLowerCase(), v);
  }
  return {
    network,
    chainId,
    genesisTimestamp: Number(asUint(raw.timestamp) ?? 0n),
    activation,
    validators,
    alloc,
    // Absent: prague, as every chain made before the field existed; a hardfork the node cannot run is refused here.
    ...parseEvmHardfork(raw.evm_hardfork),
    epochLength: Number(asUint(raw.epoch_length, 0xffffffffn) || DEFAULT_EPOCH_LENGTH),
    ...(isAddress(raw.admin) ? { admin: (raw.admin as string).toLowerCase() } : {}),
  };
}

/** The genesis file for these parameters (the inverse of readGenesisFile): private networks, tests, benches. */
export function writeGenesisFile(path: string, p: ChainParams): void {
  writeFileSync(path, genesisText(p));
}

/** The genesis file's text for these parameters (what writeGenesisFile writes). */
export function genesisText(p: ChainParams): string {
  const a = p.activation;
  return stringifyExact({
    chain_id: p.chainId,
    network: p.network,
    timestamp: p.genesisTimestamp,
    activation: { dpos_bft: a.dposBft, evm: a.evm, reward_v2: a.rewardV2, tokenomics_v2: a.tokenomicsV2, nft: a.nft },
    validators: p.validators,
    alloc: Object.fromEntries(p.alloc),
    evm_hardfork: evmHardforkJson(p),
    epoch_length: p.epochLength,
    ...(p.admin ? { admin: p.admin } : {}),
  });
}

/**
 * The identity of a network (64 hex): SHA-256 of the genesis block hash and the genesis parameters the
 * block does not commit to (validators, activation heights, chain id, epoch length, EVM hardfork). Two
 * networks with the same allocation and genesis second but other validators have the same genesis
 * block, not the same identity. P2P protocol ids and the status handshake carry it (docs/p2p.md).
 */
export function genesisIdentity(p: ChainParams, genesisBlockHash: string): string {
  const validators = [...p.validators]
    .sort((a, b) => (a.address < b.address ? -1 : 1))
    .map((v) => ({ address: v.address, public_key: v.public_key, stake: String(v.stake ?? 0n) }));
  const a = p.activation;
  const canonical = JSON.stringify({
    genesis: genesisBlockHash,
    chain_id: p.chainId,
    network: p.network,
    activation: [a.dposBft, a.evm, a.rewardV2, a.tokenomicsV2, a.nft],
    validators,
    // A name as before when nothing is scheduled, so existing networks keep their identity.
    evm_hardfork: evmHardforkJson(p),
    epoch_length: p.epochLength,
  });
  return toHex(sha256(Buffer.from(canonical, 'utf8')));
}
