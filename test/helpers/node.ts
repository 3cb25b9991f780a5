import { join } from 'node:path';
import { pino } from 'pino';
import { type NodeConfig, parseConfig, NativeNode, saveValidatorKey } from '../../ts/node/index.js';
import { parseJsonExact, stringifyExact, toHex } from '../../ts/util/index.js';
import { tempDir } from './util.js';
import {
  writeGenesisFile,
  type ChainParams,
  DEFAULT_EPOCH_LENGTH,
  DEV_ACCOUNT_BALANCE_BASE,
  PRESET_ACTIVATION,
} from '../../ts/chain/index.js';
import { DEV_MNEMONIC, type KeyPair, keyPairFromMnemonic, randomKeyPair } from '../../ts/ledger/index.js';

export interface TestNode {
  node: NativeNode;
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * Rate limits of test nodes: tests make far more than 60 requests a minute from 127.0.0.1, so the spec's
 * limits apply only where a test asks for them (config overrides or NATIVE_RATE_LIMIT_* in `env`).
 */
export const TEST_RATE_LIMIT = 1_000_000_000;

/** Environment for spawned node binaries: the same high rate limits (a test's own env or flags still win). */
export const TEST_NODE_ENV: NodeJS.ProcessEnv = {
  NATIVE_RATE_LIMIT_GLOBAL: String(TEST_RATE_LIMIT),
  NATIVE_RATE_LIMIT_WRITE: String(TEST_RATE_LIMIT),
  // Never the dev chain's 50051 in tests: gRPC tests ask for port 0 (config grpcPort: 0).
  NATIVE_GRPC_PORT: 'off',
};

/**
 * A real dev node on 127.0.0.1 (ephemeral port) with its own RocksDB in a temp dir (or `overrides.dataDir`,
 * which the test then owns: stop() does not delete it).
 */
export async function startTestNode(overrides: Partial<NodeConfig> = {}, env: NodeJS.ProcessEnv = {}): Promise<TestNode> {
  const tmp = tempDir();
  const config: NodeConfig = {
    ...parseConfig(['--dev'], { ...TEST_NODE_ENV, ...env }),
    apiPort: 0,
    dataDir: tmp.dir,
    blockTimeMs: 200,
    logLevel: 'silent',
    // A cold call worker loads the EVM first; on a loaded 2-core machine that alone can pass geth's 5 s.
    // Tests of the timeout itself set their own.
    rpcEvmTimeoutMs: 30_000,
    ...overrides,
  };
  let node: NativeNode;
  try {
    node = await NativeNode.start(config, pino({ level: 'silent' }));
  } catch (err) {
    tmp.cleanup();
    throw err;
  }
  return {
    node,
    url: `http://127.0.0.1:${node.http.port}`,
    dataDir: config.dataDir,
    stop: async () => {
      await node.stop();
      tmp.cleanup();
    },
  };
}

export interface JsonResponse<T = any> {
  status: number;
  body: T;
  text: string;
  headers: Headers;
}

export async function httpJson<T = any>(url: string, init?: RequestInit & { json?: unknown }): Promise<JsonResponse<T>> {
  const headers = new Headers(init?.headers);
  let body = init?.body;
  if (init?.json !== undefined) {
    headers.set('content-type', 'application/json');
    body = stringifyExact(init.json);
  }
  const res = await fetch(url, { ...init, headers, body });
  const text = await res.text();
  let parsed: unknown = null;
  try {
    parsed = text ? parseJsonExact(text) : null;
  } catch {
    parsed = null;
  }
  return { status: res.status, body: parsed as T, text, headers: res.headers };
}

/**
 * A dev node from a genesis file whose validator has no stake (a PoA authority; new dev chains stake theirs):
 * the proposer keeps the coinbase, the interface's fee split (floor(fee/2) to the proposer) as it reads.
 */
export async function startUnstakedDevNode(overrides: Partial<NodeConfig> = {}): Promise<TestNode> {
  const tmp = tempDir();
  const key = randomKeyPair();
  saveValidatorKey(tmp.dir, key);
  const genesisFile = join(tmp.dir, 'genesis.json');
  writeGenesisFile(genesisFile, unstakedDevParams(key, 'osaka'));
  const n = await startTestNode({ ...overrides, dataDir: tmp.dir, genesisFile }).catch((err) => {
    tmp.cleanup();
    throw err;
  });
  return {
    ...n,
    stop: async () => {
      await n.stop();
      tmp.cleanup();
    },
  };
}

/** A dev genesis as every dev chain had before validators were staked: ten accounts of 10,000 coins, `key` unstaked. */
export function unstakedDevParams(key: KeyPair, evmHardfork: string): ChainParams {
  const alloc = new Map<string, bigint>();
  for (let i = 0; i < 10; i++) alloc.set(keyPairFromMnemonic(DEV_MNEMONIC, i).address, DEV_ACCOUNT_BALANCE_BASE);
  return {
    network: 'dev',
    chainId: 7120,
    genesisTimestamp: Math.floor(Date.now() / 1000),
    activation: PRESET_ACTIVATION.dev,
    validators: [{ address: key.address, public_key: toHex(key.publicKey), name: 'native-node-dev' }],
    alloc,
    evmHardfork,
    epochLength: DEFAULT_EPOCH_LENGTH,
  };
}
