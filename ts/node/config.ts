import { parseArgs } from 'node:util';
import {
  DEFAULT_WS_LIMITS,
  ClientIpResolver,
  DEFAULT_RATE_LIMIT_GLOBAL,
  DEFAULT_RATE_LIMIT_WINDOW_SECS,
  DEFAULT_RATE_LIMIT_WRITE,
} from '../api/index.js';
import {
  DEFAULT_API_PORT,
  MAINNET_CHAIN_ID,
  TESTNET_CHAIN_ID,
  type HistoryRetention,
  parseHistoryRetention,
  checkEvmHardfork,
  DEFAULT_DEV_ACCOUNTS,
} from '../chain/index.js';
import { DEFAULT_PACK_GAS_LIMIT } from '../consensus/interface.js';
import {
  DEFAULT_RPC_EVM_QUEUE,
  DEFAULT_RPC_EVM_TIMEOUT_MS,
  DEFAULT_RPC_GAS_CAP,
  DEV_RPC_EVM_INLINE_MS,
  defaultCallWorkers,
  defaultNodeParallelWorkers,
} from '../execution/index.js';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT } from '../http/index.js';
import { DEFAULT_MEMPOOL_LIMITS } from '../mempool/index.js';
import { DEFAULT_COMPILE_MEMORY_MB, DEFAULT_COMPILE_TIMEOUT_MS } from '../verify/index.js';
import { DEFAULT_STATE_CACHE_MB } from '../state/index.js';
import { DEFAULT_SNAPSHOT_INTERVAL, DEFAULT_SNAPSHOT_KEEP } from '../snapshot/index.js';
import { type StateSyncTrust, parseStateSyncTrust } from '../sync/light.js';
import { DEFAULT_READY_MAX_AGE_BLOCKS, DEFAULT_READY_MAX_LAG_BLOCKS, parseDurationMs } from '../services/index.js';
import { NODE_FLAGS, infoCommand } from './flags.js';

export type Network = 'mainnet' | 'testnet' | 'dev';
export type LogFormat = 'pretty' | 'json';

export interface NodeConfig {
  network: Network;
  chainId: number;
  apiHost: string;
  apiPort: number;
  dataDir: string;
  apiKey?: string;
  corsOrigin?: string;
  genesisFile?: string;
  blockTimeMs: number;
  windowSize: number;
  /** State history kept for reads at past heights and rollbacks (`--history full|N`). */
  history: HistoryRetention;
  /** Bytes of committed state values cached in memory (`--state-cache-mb`). */
  stateCacheBytes: number;
  /** A state snapshot every this many finalized blocks, 0 = none (`--snapshot-interval`; docs/p2p.md, "State sync"). */
  snapshotInterval: number;
  /** State snapshots kept, the newest (`--snapshot-keep`). */
  snapshotKeep: number;
  /** `--state-sync`: a fresh data dir joins from a peer snapshot (docs/p2p.md, "State sync"). */
  stateSync: boolean;
  /** `--state-sync-trust HEIGHT:HASH`: the block whose snapshot is restored (hash hex, no 0x). */
  stateSyncTrust?: StateSyncTrust;
  /** Journal accepted transactions and replay them at start (`--tx-journal on|off`). */
  txJournal: boolean;
  maxBlockTxs: number;
  /** EVM gas the proposer packs into a block (the first EVM transaction may use up to the 30M limit). */
  packGasLimit: bigint;
  /** Time budget of the packing rule beyond packGasLimit (ms; 0: the gas rule alone). */
  packTimeMs: number;
  httpBackend: 'auto' | 'uws' | 'node';
  logLevel: string;
  /** Explicit --log-format / NATIVE_LOG_FORMAT; undefined = pretty on a terminal, JSON otherwise. */
  logFormat?: LogFormat;
  nodeName: string;
  maxPerSender: number;
  maxMempool: number;
  /** Largest request body (413 beyond). */
  maxBodyBytes: number;
  /** Requests in flight at once (503 beyond). */
  maxConcurrent: number;
  /** Requests per client IP per window, all routes; 0 = unlimited. */
  rateLimitGlobal: number;
  /** Requests per client IP per window to write routes; 0 = unlimited. */
  rateLimitWrite: number;
  rateLimitWindowSecs: number;
  /** Proxies (IPs or CIDR ranges) whose X-Forwarded-For names the client; empty = use the socket address. */
  trustedProxies: string[];
  /** P2P listen port; null = no networking (a single-node chain). */
  p2pPort: number | null;
  p2pHost: string;
  /** Static peers: multiaddrs `/ip4/…/tcp/…/p2p/<peer id>`. */
  peers: string[];
  /** `validator` produces blocks when its key is scheduled; `full` only follows. */
  role: 'validator' | 'full';
  /** Gas of an eth_call without `gas` and the most any call or estimate may use; 0n = no cap (geth --rpc.gascap). */
  rpcGasCap: bigint;
  /** Time limit of eth_call / eth_estimateGas, queueing included (geth --rpc.evmtimeout). */
  rpcEvmTimeoutMs: number;
  /** Call worker threads (calls running at once). */
  rpcEvmWorkers: number;
  /**
   * Speculation workers of parallel block execution, started with the first block of 64+ EVM transactions; 0 =
   * off (sequential). Default: the cores but one (1 to 4), 0 on one core (docs/evm.md "Parallel execution").
   */
  parallelEvmWorkers: number;
  /** How long a call may run on the main thread before it moves to a worker (ms); 0 = always a worker. */
  rpcEvmInlineMs: number;
  /** Calls waiting for a worker; beyond, -32005 / 503. */
  rpcEvmQueue: number;
  /** JSON-RPC over WebSocket on the API port (`--ws`; on by default on the dev chain). */
  ws: boolean;
  wsMaxConnections: number;
  /** Dev chain: web3_clientVersion starts with `anvil/` (tools that accept only anvil or Hardhat nodes). */
  anvilCompat: boolean;
  /** Dev chain: EVM hardfork of a new dev chain (`--hardfork`); undefined = osaka, or what an existing one runs. */
  hardfork?: string;
  /** Dev chain: dev mnemonic accounts funded at genesis and signed for (`--dev-accounts`, default 10). */
  devAccounts: number;
  /** Dev chain: genesis balance of each dev account in coins (`--dev-balance`, default 10,000). */
  devBalanceCoins: bigint;
  /** Dev chain: no code size and initcode size limits (`--allow-unlimited-contract-size`). */
  allowUnlimitedContractSize: boolean;
  /** Dev chain: the block gas limit (`--gas-limit`); undefined = the chains' 30,000,000. */
  gasLimit?: bigint;
  /** Bytes queued for a WebSocket client that does not read; beyond, it is dropped. */
  wsMaxBufferedBytes: number;
  /** gRPC (HTTP/2) port on apiHost; 0 = ephemeral; null = no gRPC server (gRPC-Web stays on the API port). */
  grpcPort: number | null;
  /** PEM files of the gRPC server's TLS certificate chain and key; both or neither. */
  grpcTlsCert?: string;
  grpcTlsKey?: string;
  /** Serve gRPC server reflection. */
  grpcReflection: boolean;
  /** Directory of soljson-v<version>.js compilers for verification, besides the bundled solc. */
  solcDir?: string;
  /** Time limit of one verification's compilation, queueing included. */
  verifyTimeoutMs: number;
  /** Memory limit of one verification's compilation. */
  verifyMemoryMb: number;
  /** GET /ready: blocks the head may trail the best proven peer height. */
  readyMaxLagBlocks: number;
  /** GET /ready: largest head age in ms; null = no age check (automine). */
  readyMaxAgeMs: number | null;
  /** SIGTERM: seconds the node keeps answering (with /ready 503) before it closes its listener. */
  drainSecs: number;
  /** SIGTERM: seconds in-flight requests may take to finish once the listener is closed. */
  shutdownGraceSecs: number;
  /** Per-key quotas file (`--api-keys`); re-read on SIGHUP. */
  apiKeysFile?: string;
}

/** The gRPC port of the dev chain when none is set (mainnet and testnet: off unless set). */
export const DEFAULT_DEV_GRPC_PORT = 50051;

export class ConfigError extends Error {
  readonly code = 'CONFIG';
}

/** What the command line asks for: run a node, or print help / the version and exit. */
export type Command = { kind: 'run'; config: NodeConfig } | { kind: 'help' } | { kind: 'version' };

const parserOptions = Object.fromEntries(NODE_FLAGS.map((f) => [f.name, { type: f.type }])) as Record<
  string,
  { type: 'string' | 'boolean' }
>;

/** `--help` and `--version` win over everything else (and over bad values), as in most tools. */
export function parseCommand(argv: string[], env: NodeJS.ProcessEnv): Command {
  const info = infoCommand(argv);
  return info ? { kind: info } : { kind: 'run', config: parseConfig(argv, env) };
}

/**
 * Flags win over environment variables, which win over the network preset.
 * `--dev` selects the dev chain (chain id 7120 unless NATIVE_CHAIN_ID is set). The dev chain is for one developer
 * on one machine, like anvil and Hardhat: no rate limits and CORS `*` unless set explicitly.
 */
export function parseConfig(argv: string[], env: NodeJS.ProcessEnv): NodeConfig {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args: argv, allowPositionals: false, strict: true, options: parserOptions }));
  } catch (err) {
    throw new ConfigError(`${(err as Error).message} (see --help)`);
  }
  const str = (flag: string, envName: string): string | undefined => (values[flag] as string | undefined) ?? env[envName];
  const int = (flag: string, envName: string, def: number, min = 0): number => {
    const raw = str(flag, envName);
    if (raw === undefined || raw === '') return def;
    if (!/^\d{1,15}$/.test(raw) || Number(raw) < min)
      throw new ConfigError(`--${flag} / ${envName} must be an integer >= ${min}, got ${raw}`);
    return Number(raw);
  };
  const network = (values.dev ? 'dev' : (str('network', 'NATIVE_NETWORK') ?? 'mainnet')) as Network;
  if (!['mainnet', 'testnet', 'dev'].includes(network)) throw new ConfigError(`unknown network ${network}`);
  const dev = network === 'dev';
  const defaultChainId = network === 'mainnet' ? MAINNET_CHAIN_ID : TESTNET_CHAIN_ID;
  const apiKey = str('api-key', 'NATIVE_API_KEY') || undefined;
  if (apiKey !== undefined && apiKey.length < 16) throw new ConfigError('NATIVE_API_KEY must be at least 16 characters');
  const backend = (str('http-backend', 'NATIVE_HTTP_BACKEND') ?? 'auto') as NodeConfig['httpBackend'];
  if (!['auto', 'uws', 'node'].includes(backend)) throw new ConfigError(`unknown http backend ${backend}`);
  const logFormat = (str('log-format', 'NATIVE_LOG_FORMAT') || undefined) as LogFormat | undefined;
  if (logFormat !== undefined && logFormat !== 'pretty' && logFormat !== 'json') {
    throw new ConfigError(`--log-format / NATIVE_LOG_FORMAT must be pretty or json, got ${logFormat}`);
  }
  const trustedProxies = (str('trusted-proxies', 'NATIVE_TRUSTED_PROXIES') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  try {
    new ClientIpResolver(trustedProxies);
  } catch (err) {
    throw new ConfigError(`--trusted-proxies / NATIVE_TRUSTED_PROXIES: ${(err as Error).message}`);
  }
  const role = (str('role', 'NATIVE_ROLE') ?? 'validator') as NodeConfig['role'];
  if (!['validator', 'full'].includes(role)) throw new ConfigError(`--role / NATIVE_ROLE must be validator or full, got ${role}`);
  const p2pRaw = str('p2p-port', 'NATIVE_P2P_PORT');
  const grpcRaw = str('grpc-port', 'NATIVE_GRPC_PORT');
  const grpcPort =
    grpcRaw === 'off'
      ? null
      : grpcRaw === undefined || grpcRaw === ''
        ? dev
          ? DEFAULT_DEV_GRPC_PORT
          : null
        : int('grpc-port', 'NATIVE_GRPC_PORT', 0);
  if (grpcPort !== null && grpcPort > 65535)
    throw new ConfigError(`--grpc-port / NATIVE_GRPC_PORT must be a port or off, got ${grpcRaw}`);
  const grpcTlsCert = str('grpc-tls-cert', 'NATIVE_GRPC_TLS_CERT') || undefined;
  const grpcTlsKey = str('grpc-tls-key', 'NATIVE_GRPC_TLS_KEY') || undefined;
  if ((grpcTlsCert === undefined) !== (grpcTlsKey === undefined)) {
    throw new ConfigError('--grpc-tls-cert and --grpc-tls-key go together: set both for TLS, or neither');
  }
  const reflectionEnv = env.NATIVE_GRPC_REFLECTION;
  if (reflectionEnv !== undefined && !['', '0', '1', 'true', 'false'].includes(reflectionEnv)) {
    throw new ConfigError(`NATIVE_GRPC_REFLECTION must be true or false, got ${reflectionEnv}`);
  }
  // 0 on the dev chain: automine, a block per transaction (Hardhat's and anvil's default).
  const blockTimeMs = blockTime(int('block-time-ms', 'NATIVE_BLOCK_TIME_MS', 1000, 0), dev);
  const historyRaw = str('history', 'NATIVE_HISTORY') || 'full';
  const history = parseHistoryRetention(historyRaw);
  if (!history) throw new ConfigError(`--history / NATIVE_HISTORY must be full or a number of blocks >= 1, got ${historyRaw}`);
  const journalRaw = str('tx-journal', 'NATIVE_TX_JOURNAL') || 'on';
  if (journalRaw !== 'on' && journalRaw !== 'off')
    throw new ConfigError(`--tx-journal / NATIVE_TX_JOURNAL must be on or off, got ${journalRaw}`);
  const stateSync = values['state-sync'] === true;
  const trust = stateSyncTrust(str('state-sync-trust', 'NATIVE_STATE_SYNC_TRUST'));
  if (trust && !stateSync) throw new ConfigError('--state-sync-trust goes with --state-sync');
  // The snapshot comes from the peers, and the blocks after it too.
  if (stateSync && (p2pRaw === undefined || p2pRaw === '' || (str('peers', 'NATIVE_PEERS') ?? '').trim() === ''))
    throw new ConfigError('--state-sync needs --p2p-port and --peers (the nodes to fetch the snapshot from)');
  return {
    network,
    chainId: int('chain-id', 'NATIVE_CHAIN_ID', defaultChainId, 1),
    apiHost: str('host', 'NATIVE_API_HOST') ?? '127.0.0.1',
    apiPort: int('port', 'NATIVE_API_PORT', DEFAULT_API_PORT[network]),
    dataDir: str('data-dir', 'NATIVE_DATA_DIR') ?? `data/${network}`,
    apiKey,
    corsOrigin: str('cors-origin', 'NATIVE_CORS_ORIGIN') || (dev ? '*' : undefined),
    genesisFile: str('genesis', 'NATIVE_GENESIS'),
    blockTimeMs,
    windowSize: int('window-size', 'CHAIN_WINDOW_SIZE', 1000, 1),
    history,
    stateCacheBytes: int('state-cache-mb', 'NATIVE_STATE_CACHE_MB', DEFAULT_STATE_CACHE_MB, 1) * 2 ** 20,
    snapshotInterval: int('snapshot-interval', 'NATIVE_SNAPSHOT_INTERVAL', dev ? 0 : DEFAULT_SNAPSHOT_INTERVAL, 0),
    snapshotKeep: int('snapshot-keep', 'NATIVE_SNAPSHOT_KEEP', DEFAULT_SNAPSHOT_KEEP, 1),
    stateSync,
    stateSyncTrust: trust,
    txJournal: journalRaw === 'on',
    maxBlockTxs: int('max-block-txs', 'NATIVE_MAX_BLOCK_TXS', 20_000, 1),
    packGasLimit: BigInt(int('block-pack-gas', 'NATIVE_BLOCK_PACK_GAS', Number(DEFAULT_PACK_GAS_LIMIT), 21_000)),
    packTimeMs: int('block-pack-ms', 'NATIVE_BLOCK_PACK_MS', defaultPackTimeMs(blockTimeMs)),
    httpBackend: backend,
    logLevel: str('log-level', 'NATIVE_LOG_LEVEL') ?? 'info',
    logFormat,
    nodeName: str('name', 'NATIVE_NODE_NAME') ?? `native-node-${network}`,
    maxPerSender: int('max-pending-per-sender', 'NATIVE_MAX_PENDING_PER_SENDER', DEFAULT_MEMPOOL_LIMITS.maxPerSender, 1),
    maxMempool: int('max-mempool', 'NATIVE_MAX_MEMPOOL', DEFAULT_MEMPOOL_LIMITS.maxTotal, 1),
    maxBodyBytes: int('max-body-bytes', 'NATIVE_MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, 1),
    maxConcurrent: int('max-concurrent', 'NATIVE_MAX_CONCURRENT', DEFAULT_MAX_CONCURRENT, 1),
    rateLimitGlobal: int('rate-limit-global', 'NATIVE_RATE_LIMIT_GLOBAL', dev ? 0 : DEFAULT_RATE_LIMIT_GLOBAL),
    rateLimitWrite: int('rate-limit-write', 'NATIVE_RATE_LIMIT_WRITE', dev ? 0 : DEFAULT_RATE_LIMIT_WRITE),
    rateLimitWindowSecs: int('rate-limit-window-secs', 'NATIVE_RATE_LIMIT_WINDOW_SECS', DEFAULT_RATE_LIMIT_WINDOW_SECS, 1),
    trustedProxies,
    p2pPort: p2pRaw === undefined || p2pRaw === '' ? null : int('p2p-port', 'NATIVE_P2P_PORT', 0),
    p2pHost: str('p2p-host', 'NATIVE_P2P_HOST') ?? '0.0.0.0',
    peers: (str('peers', 'NATIVE_PEERS') ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== ''),
    role,
    rpcGasCap: BigInt(int('rpc-gascap', 'NATIVE_RPC_GASCAP', Number(DEFAULT_RPC_GAS_CAP))),
    rpcEvmTimeoutMs: duration(
      str('rpc-evmtimeout', 'NATIVE_RPC_EVMTIMEOUT'),
      DEFAULT_RPC_EVM_TIMEOUT_MS,
      'rpc-evmtimeout / NATIVE_RPC_EVMTIMEOUT',
    ),
    rpcEvmWorkers: int('rpc-evm-workers', 'NATIVE_RPC_EVM_WORKERS', defaultCallWorkers(), 1),
    parallelEvmWorkers: int('parallel-evm-workers', 'NATIVE_PARALLEL_EVM_WORKERS', defaultNodeParallelWorkers()),
    // The dev chain answers its tools' short calls on the main thread (docs/dev-chain.md, "Calls").
    rpcEvmInlineMs: duration(
      str('rpc-evm-inline', 'NATIVE_RPC_EVM_INLINE'),
      dev ? DEV_RPC_EVM_INLINE_MS : 0,
      'rpc-evm-inline / NATIVE_RPC_EVM_INLINE',
      0,
    ),
    rpcEvmQueue: int('rpc-evm-queue', 'NATIVE_RPC_EVM_QUEUE', DEFAULT_RPC_EVM_QUEUE),
    ws: values.ws === true || flagEnv(env.NATIVE_WS, 'NATIVE_WS', dev),
    anvilCompat: anvilCompat(values['anvil-compat'] === true, dev),
    ...devChainOptions(values, dev),
    wsMaxConnections: int('ws-max-connections', 'NATIVE_WS_MAX_CONNECTIONS', DEFAULT_WS_LIMITS.maxConnections, 1),
    wsMaxBufferedBytes: int('ws-max-buffered-bytes', 'NATIVE_WS_MAX_BUFFERED_BYTES', DEFAULT_WS_LIMITS.maxBufferedBytes, 1024),
    grpcPort,
    grpcTlsCert,
    grpcTlsKey,
    grpcReflection: values['grpc-reflection'] === true || reflectionEnv === '1' || reflectionEnv === 'true',
    solcDir: str('solc-dir', 'NATIVE_SOLC_DIR') || undefined,
    verifyTimeoutMs: duration(
      str('verify-timeout', 'NATIVE_VERIFY_TIMEOUT'),
      DEFAULT_COMPILE_TIMEOUT_MS,
      'verify-timeout / NATIVE_VERIFY_TIMEOUT',
    ),
    verifyMemoryMb: int('verify-memory-mb', 'NATIVE_VERIFY_MEMORY_MB', DEFAULT_COMPILE_MEMORY_MB, 64),
    readyMaxLagBlocks: int('ready-max-lag-blocks', 'NATIVE_READY_MAX_LAG_BLOCKS', DEFAULT_READY_MAX_LAG_BLOCKS),
    readyMaxAgeMs: readyMaxAge(str('ready-max-age', 'NATIVE_READY_MAX_AGE'), blockTimeMs, dev),
    // The dev chain stops at once on Ctrl-C: nothing balances across it.
    drainSecs: int('drain-secs', 'NATIVE_DRAIN_SECS', dev ? 0 : DEFAULT_DRAIN_SECS),
    shutdownGraceSecs: int('shutdown-grace-secs', 'NATIVE_SHUTDOWN_GRACE_SECS', DEFAULT_SHUTDOWN_GRACE_SECS),
    apiKeysFile: str('api-keys', 'NATIVE_API_KEYS_FILE') || undefined,
  };
}

/** SIGTERM: seconds the node keeps answering before it closes its listener (`--drain-secs`). */
export const DEFAULT_DRAIN_SECS = 5;
/** SIGTERM: seconds in-flight requests may take once the listener is closed (`--shutdown-grace-secs`). */
export const DEFAULT_SHUTDOWN_GRACE_SECS = 10;

/**
 * `--ready-max-age`: a duration (`10s`, `500ms`, bare seconds) or `off`; default 10 block times. Off on the dev
 * chain: it makes blocks when its tools ask (automine, evm_mine), and an idle dev chain is still ready.
 */
function readyMaxAge(raw: string | undefined, blockTimeMs: number, dev: boolean): number | null {
  if (raw === undefined || raw === '') return dev ? null : DEFAULT_READY_MAX_AGE_BLOCKS * blockTimeMs;
  if (raw === 'off') return null;
  const ms = parseDurationMs(raw);
  if (ms === null || ms < 1)
    throw new ConfigError(`--ready-max-age / NATIVE_READY_MAX_AGE must be a duration like 10s or 500ms, or off, got ${raw}`);
  return ms;
}

/**
 * Default time budget of the packing rule: 40% of the slot, leaving the rest to the state root, the commit
 * and the interfaces (automine has no slot: as for 1 s blocks). docs/evm.md "Block time".
 */
function defaultPackTimeMs(blockTimeMs: number): number {
  return Math.floor((blockTimeMs === 0 ? 1000 : blockTimeMs) * 0.4);
}

/** Block interval: at least 50 ms; 0 (automine) only on the dev chain. */
function blockTime(ms: number, dev: boolean): number {
  if (ms === 0 && dev) return 0;
  if (ms < 50)
    throw new ConfigError(`--block-time-ms / NATIVE_BLOCK_TIME_MS must be at least 50 (0, automine, only with --dev), got ${ms}`);
  return ms;
}

/** The dev chain's genesis and EVM options (anvil's and Hardhat's); each is refused without --dev. */
function devChainOptions(
  values: Record<string, string | boolean | undefined>,
  dev: boolean,
): Pick<NodeConfig, 'hardfork' | 'devAccounts' | 'devBalanceCoins' | 'allowUnlimitedContractSize' | 'gasLimit'> {
  for (const flag of ['hardfork', 'dev-accounts', 'dev-balance', 'allow-unlimited-contract-size', 'gas-limit']) {
    if (values[flag] !== undefined && !dev) throw new ConfigError(`--${flag} is a dev chain option (use it with --dev)`);
  }
  const hardfork = values.hardfork as string | undefined;
  if (hardfork !== undefined) {
    try {
      checkEvmHardfork(hardfork, '--hardfork');
    } catch (err) {
      throw new ConfigError((err as Error).message);
    }
  }
  const count = (values['dev-accounts'] as string | undefined) ?? String(DEFAULT_DEV_ACCOUNTS);
  if (!/^\d{1,4}$/.test(count) || Number(count) < 1 || Number(count) > MAX_DEV_ACCOUNTS)
    throw new ConfigError(`--dev-accounts must be an integer from 1 to ${MAX_DEV_ACCOUNTS}, got ${count}`);
  const balance = (values['dev-balance'] as string | undefined) ?? '10000';
  if (!/^\d{1,18}$/.test(balance)) throw new ConfigError(`--dev-balance must be a whole number of coins, got ${balance}`);
  const gasLimit = values['gas-limit'] as string | undefined;
  if (gasLimit !== undefined && (!/^\d{1,15}$/.test(gasLimit) || BigInt(gasLimit) < 21_000n))
    throw new ConfigError(`--gas-limit must be a whole number of gas, at least 21000, got ${gasLimit}`);
  return {
    hardfork,
    ...(gasLimit !== undefined ? { gasLimit: BigInt(gasLimit) } : {}),
    devAccounts: Number(count),
    devBalanceCoins: BigInt(balance),
    allowUnlimitedContractSize: values['allow-unlimited-contract-size'] === true,
  };
}

/** Most dev accounts (each is derived from the mnemonic at start: ~1 ms apiece). */
const MAX_DEV_ACCOUNTS = 1000;

function anvilCompat(on: boolean, dev: boolean): boolean {
  if (on && !dev) throw new ConfigError('--anvil-compat is a dev chain option (use it with --dev)');
  return on;
}

/** A boolean environment variable: 1/true/on or 0/false/off; unset or empty = the default. */
function flagEnv(raw: string | undefined, name: string, def: boolean): boolean {
  if (raw === undefined || raw === '') return def;
  const v = raw.toLowerCase();
  if (['1', 'true', 'on', 'yes'].includes(v)) return true;
  if (['0', 'false', 'off', 'no'].includes(v)) return false;
  throw new ConfigError(`${name} must be 1/true/on or 0/false/off, got ${raw}`);
}

/** `--rpc-evmtimeout`, `--verify-timeout`: a Go-style duration (`5s`, `1.5s`, `300ms`) or milliseconds; at least `min` ms. */
function duration(raw: string | undefined, def: number, flag: string, min = 1): number {
  if (raw === undefined || raw === '') return def;
  const m = /^(\d{1,9}(?:\.\d{1,3})?)(ms|s)?$/.exec(raw.trim());
  const ms = m ? Math.round(Number(m[1]) * (m[2] === 's' ? 1000 : 1)) : Number.NaN;
  if (!(ms >= min)) throw new ConfigError(`--${flag} must be a duration like 5s or 300ms, got ${raw}`);
  return ms;
}

function stateSyncTrust(raw: string | undefined): StateSyncTrust | undefined {
  if (raw === undefined || raw === '') return undefined;
  try {
    return parseStateSyncTrust(raw);
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
}
