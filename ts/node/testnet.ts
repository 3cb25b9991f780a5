import {
  NEW_CHAIN_EVM_HARDFORK,
  writeGenesisFile,
  type ChainParams,
  DEFAULT_EPOCH_LENGTH,
  DEV_ACCOUNT_BALANCE_BASE,
  TESTNET_CHAIN_ID,
} from '../chain/index.js';
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEV_MNEMONIC, keyPairFromMnemonic, randomKeyPair, MIN_SELF_STAKE_BASE } from '../ledger/index.js';
import { peerIdOfNodeKey, saveNodeKey } from '../network/index.js';
import { toHex } from '../util/index.js';
import { ConfigError } from './config.js';
import { saveValidatorKey } from './validator-key.js';

/** Self-stake of every testnet validator: twice the minimum (30,000 coins). */
export const TESTNET_SELF_STAKE_BASE = 2n * MIN_SELF_STAKE_BASE;

/** One entry of DIR/nodes.json (a fixed interface: tests and scripts read it). */
export interface TestnetNode {
  name: string;
  role: 'validator' | 'full';
  api_url: string;
  p2p_port: number;
  validator_address: string | null;
  data_dir: string;
  /** Shell command that starts this node in the foreground from the repository root. */
  start: string;
}

export interface TestnetOptions {
  validators: number;
  fullNodes: number;
  out: string;
  basePort: number;
  chainId: number;
  dposBftHeight: number;
  blockTimeMs: number;
}

export const TESTNET_USAGE = `usage: node dist/ts/node/main.js testnet --validators N [--full-nodes M] --out DIR
       [--base-port P] [--chain-id 7120] [--dpos-bft-height H] [--block-time-ms T]
  Writes DIR/genesis.json, DIR/node0 … DIR/node<N+M-1> (keys; API on P+i, P2P on P+100+i, gRPC on P+200+i;
  defaults P=26600, H=10, T=1000) and DIR/nodes.json (each node's name, role, api_url, p2p_port,
  validator_address, data_dir and the start command, run from the repository root). docs/p2p.md.
`;

export function parseTestnetArgs(argv: string[]): TestnetOptions {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      validators: { type: 'string' },
      'full-nodes': { type: 'string' },
      out: { type: 'string' },
      'base-port': { type: 'string' },
      'chain-id': { type: 'string' },
      'dpos-bft-height': { type: 'string' },
      'block-time-ms': { type: 'string' },
    },
  });
  const int = (name: string, def: number | undefined, min: number): number => {
    const raw = (values as Record<string, string | undefined>)[name];
    if (raw === undefined) {
      if (def === undefined) throw new ConfigError(`testnet: --${name} is required`);
      return def;
    }
    if (!/^\d{1,9}$/.test(raw) || Number(raw) < min) throw new ConfigError(`testnet: --${name} must be an integer >= ${min}`);
    return Number(raw);
  };
  if (!values.out) throw new ConfigError('testnet: --out DIR is required');
  return {
    validators: int('validators', undefined, 1),
    fullNodes: int('full-nodes', 0, 0),
    out: values.out,
    basePort: int('base-port', 26600, 1),
    chainId: int('chain-id', TESTNET_CHAIN_ID, 1),
    dposBftHeight: int('dpos-bft-height', 10, 0),
    blockTimeMs: int('block-time-ms', 1000, 50),
  };
}

/**
 * Write a local network (like `cometbft testnet`): one genesis shared by all, and per node a data dir
 * with its validator key and node key; API on basePort+i, P2P on basePort+100+i, gRPC on
 * basePort+200+i; every node lists every other as a static peer. The ten dev mnemonic accounts are
 * funded so the network is usable at once. Returns the nodes.json entries.
 */
export function generateTestnet(o: TestnetOptions): TestnetNode[] {
  const out = resolve(o.out);
  mkdirSync(out, { recursive: true });
  const total = o.validators + o.fullNodes;
  const keys = Array.from({ length: total }, () => randomKeyPair());
  const nodeKeys = Array.from({ length: total }, () => randomBytes(32));
  const alloc = new Map<string, bigint>();
  for (let i = 0; i < 10; i++) alloc.set(keyPairFromMnemonic(DEV_MNEMONIC, i).address, DEV_ACCOUNT_BALANCE_BASE);
  const params: ChainParams = {
    network: 'testnet',
    chainId: o.chainId,
    genesisTimestamp: Math.floor(Date.now() / 1000),
    activation: {
      dposBft: o.dposBftHeight,
      evm: 0,
      rewardV2: o.dposBftHeight,
      tokenomicsV2: o.dposBftHeight,
      nft: o.dposBftHeight,
    },
    validators: keys
      .slice(0, o.validators)
      // Equal self-stakes above the minimum: the network is in DPoS (DPoS+BFT from 4 validators) at its activation height.
      .map((k, i) => ({ address: k.address, public_key: toHex(k.publicKey), name: `node${i}`, stake: TESTNET_SELF_STAKE_BASE })),
    alloc,
    evmHardfork: NEW_CHAIN_EVM_HARDFORK,
    epochLength: DEFAULT_EPOCH_LENGTH,
  };
  const genesisFile = join(out, 'genesis.json');
  writeGenesisFile(genesisFile, params);
  const addr = (i: number): string => `/ip4/127.0.0.1/tcp/${o.basePort + 100 + i}/p2p/${peerIdOfNodeKey(nodeKeys[i])}`;
  // `start` runs from the repository root (where dist/ lives), whatever directory generated the network.
  const repo = fileURLToPath(new URL('../../..', import.meta.url));
  const rel = (p: string): string => (relative(repo, p).startsWith('..') ? p : relative(repo, p) || '.');
  const nodes: TestnetNode[] = [];
  for (let i = 0; i < total; i++) {
    const dir = join(out, `node${i}`);
    saveValidatorKey(dir, keys[i]);
    saveNodeKey(dir, nodeKeys[i]);
    const role = i < o.validators ? 'validator' : 'full';
    const peers = Array.from({ length: total }, (_, j) => j)
      .filter((j) => j !== i)
      .map(addr);
    const args = [
      'node dist/ts/node/main.js',
      '--network testnet',
      `--genesis ${rel(genesisFile)}`,
      `--data-dir ${rel(dir)}`,
      `--name node${i}`,
      `--role ${role}`,
      '--host 127.0.0.1',
      `--port ${o.basePort + i}`,
      '--p2p-host 127.0.0.1',
      `--p2p-port ${o.basePort + 100 + i}`,
      `--grpc-port ${o.basePort + 200 + i}`,
      ...(peers.length ? [`--peers ${peers.join(',')}`] : []),
      `--block-time-ms ${o.blockTimeMs}`,
      // A local devnet: no per-IP rate limits (the spec's limits stay the default elsewhere).
      '--rate-limit-global 0 --rate-limit-write 0',
    ];
    nodes.push({
      name: `node${i}`,
      role,
      api_url: `http://127.0.0.1:${o.basePort + i}`,
      p2p_port: o.basePort + 100 + i,
      validator_address: role === 'validator' ? keys[i].address : null,
      data_dir: dir,
      start: args.join(' '),
    });
  }
  writeFileSync(join(out, 'nodes.json'), `${JSON.stringify(nodes, null, 2)}\n`);
  return nodes;
}
