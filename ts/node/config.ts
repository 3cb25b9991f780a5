import { parseArgs } from 'node:util';
import {
  ClientIpResolver,
  DEFAULT_RATE_LIMIT_GLOBAL,
  DEFAULT_RATE_LIMIT_WINDOW_SECS,
  DEFAULT_RATE_LIMIT_WRITE,
} from '../api/limits.js';
import { DEFAULT_API_PORT, MAINNET_CHAIN_ID, TESTNET_CHAIN_ID } from '../chain/params.js';
import { DEFAULT_PACK_GAS_LIMIT } from '../consensus/interface.js';
import {
  DEFAULT_RPC_EVM_QUEUE,
  DEFAULT_RPC_EVM_TIMEOUT_MS,
  DEFAULT_RPC_GAS_CAP,
  defaultCallWorkers,
} from '../execution/index.js';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT } from '../http/common.js';
import { DEFAULT_MEMPOOL_LIMITS } from '../mempool/mempool.js';

export type Network = 'mainnet' | 'testnet' | 'dev';

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
  maxBlockTxs: number;
  /** EVM gas the proposer packs into a block (the first EVM transaction may use up to the 30M limit). */
  packGasLimit: bigint;
  httpBackend: 'auto' | 'uws' | 'node';
  logLevel: string;
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
  /** Gas of an eth_call without `gas` and the most any call or estimate may use; 0n = no cap (geth --rpc.gascap). */
  rpcGasCap: bigint;
  /** Time limit of eth_call / eth_estimateGas, queueing included (geth --rpc.evmtimeout). */
  rpcEvmTimeoutMs: number;
  /** Call worker threads (calls running at once). */
  rpcEvmWorkers: number;
  /** Calls waiting for a worker; beyond, -32005 / 503. */
  rpcEvmQueue: number;
}

export class ConfigError extends Error {}

/**
 * Flags win over environment variables, which win over the network preset.
 * `--dev` selects the dev chain (chain id 7120 unless NATIVE_CHAIN_ID is set).
 */
export function parseConfig(argv: string[], env: NodeJS.ProcessEnv): NodeConfig {
  const { values } = parseArgs({
    args: argv,
    allowPositionals: false,
    strict: true,
    options: {
      dev: { type: 'boolean' },
      network: { type: 'string' },
      'chain-id': { type: 'string' },
      host: { type: 'string' },
      port: { type: 'string' },
      'data-dir': { type: 'string' },
      'api-key': { type: 'string' },
      'cors-origin': { type: 'string' },
      genesis: { type: 'string' },
      'block-time-ms': { type: 'string' },
      'window-size': { type: 'string' },
      'max-block-txs': { type: 'string' },
      'block-pack-gas': { type: 'string' },
      'http-backend': { type: 'string' },
      'log-level': { type: 'string' },
      name: { type: 'string' },
      'max-pending-per-sender': { type: 'string' },
      'max-mempool': { type: 'string' },
      'max-body-bytes': { type: 'string' },
      'max-concurrent': { type: 'string' },
      'rate-limit-global': { type: 'string' },
      'rate-limit-write': { type: 'string' },
      'rate-limit-window-secs': { type: 'string' },
      'trusted-proxies': { type: 'string' },
      'rpc-gascap': { type: 'string' },
      'rpc-evmtimeout': { type: 'string' },
      'rpc-evm-workers': { type: 'string' },
      'rpc-evm-queue': { type: 'string' },
    },
  });
  const str = (flag: string, envName: string): string | undefined =>
    (values as Record<string, string | undefined>)[flag] ?? env[envName];
  const int = (flag: string, envName: string, def: number, min = 0): number => {
    const raw = str(flag, envName);
    if (raw === undefined || raw === '') return def;
    if (!/^\d{1,15}$/.test(raw) || Number(raw) < min)
      throw new ConfigError(`--${flag} / ${envName} must be an integer >= ${min}, got ${raw}`);
    return Number(raw);
  };
  const network = (values.dev ? 'dev' : (str('network', 'NATIVE_NETWORK') ?? 'mainnet')) as Network;
  if (!['mainnet', 'testnet', 'dev'].includes(network)) throw new ConfigError(`unknown network ${network}`);
  const defaultChainId = network === 'mainnet' ? MAINNET_CHAIN_ID : TESTNET_CHAIN_ID;
  const apiKey = str('api-key', 'NATIVE_API_KEY') || undefined;
  if (apiKey !== undefined && apiKey.length < 16) throw new ConfigError('NATIVE_API_KEY must be at least 16 characters');
  const backend = (str('http-backend', 'NATIVE_HTTP_BACKEND') ?? 'auto') as NodeConfig['httpBackend'];
  if (!['auto', 'uws', 'node'].includes(backend)) throw new ConfigError(`unknown http backend ${backend}`);
  const trustedProxies = (str('trusted-proxies', 'NATIVE_TRUSTED_PROXIES') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  try {
    new ClientIpResolver(trustedProxies);
  } catch (err) {
    throw new ConfigError(`--trusted-proxies / NATIVE_TRUSTED_PROXIES: ${(err as Error).message}`);
  }
  return {
    network,
    chainId: int('chain-id', 'NATIVE_CHAIN_ID', defaultChainId, 1),
    apiHost: str('host', 'NATIVE_API_HOST') ?? '127.0.0.1',
    apiPort: int('port', 'NATIVE_API_PORT', DEFAULT_API_PORT[network]),
    dataDir: str('data-dir', 'NATIVE_DATA_DIR') ?? `data/${network}`,
    apiKey,
    corsOrigin: str('cors-origin', 'NATIVE_CORS_ORIGIN') || undefined,
    genesisFile: str('genesis', 'NATIVE_GENESIS'),
    blockTimeMs: int('block-time-ms', 'NATIVE_BLOCK_TIME_MS', 1000, 50),
    windowSize: int('window-size', 'CHAIN_WINDOW_SIZE', 1000, 1),
    maxBlockTxs: int('max-block-txs', 'NATIVE_MAX_BLOCK_TXS', 20_000, 1),
    packGasLimit: BigInt(int('block-pack-gas', 'NATIVE_BLOCK_PACK_GAS', Number(DEFAULT_PACK_GAS_LIMIT), 21_000)),
    httpBackend: backend,
    logLevel: str('log-level', 'NATIVE_LOG_LEVEL') ?? 'info',
    nodeName: str('name', 'NATIVE_NODE_NAME') ?? `native-node-${network}`,
    maxPerSender: int('max-pending-per-sender', 'NATIVE_MAX_PENDING_PER_SENDER', DEFAULT_MEMPOOL_LIMITS.maxPerSender, 1),
    maxMempool: int('max-mempool', 'NATIVE_MAX_MEMPOOL', DEFAULT_MEMPOOL_LIMITS.maxTotal, 1),
    maxBodyBytes: int('max-body-bytes', 'NATIVE_MAX_BODY_BYTES', DEFAULT_MAX_BODY_BYTES, 1),
    maxConcurrent: int('max-concurrent', 'NATIVE_MAX_CONCURRENT', DEFAULT_MAX_CONCURRENT, 1),
    rateLimitGlobal: int('rate-limit-global', 'NATIVE_RATE_LIMIT_GLOBAL', DEFAULT_RATE_LIMIT_GLOBAL),
    rateLimitWrite: int('rate-limit-write', 'NATIVE_RATE_LIMIT_WRITE', DEFAULT_RATE_LIMIT_WRITE),
    rateLimitWindowSecs: int('rate-limit-window-secs', 'NATIVE_RATE_LIMIT_WINDOW_SECS', DEFAULT_RATE_LIMIT_WINDOW_SECS, 1),
    trustedProxies,
    rpcGasCap: BigInt(int('rpc-gascap', 'NATIVE_RPC_GASCAP', Number(DEFAULT_RPC_GAS_CAP))),
    rpcEvmTimeoutMs: duration(str('rpc-evmtimeout', 'NATIVE_RPC_EVMTIMEOUT'), DEFAULT_RPC_EVM_TIMEOUT_MS),
    rpcEvmWorkers: int('rpc-evm-workers', 'NATIVE_RPC_EVM_WORKERS', defaultCallWorkers(), 1),
    rpcEvmQueue: int('rpc-evm-queue', 'NATIVE_RPC_EVM_QUEUE', DEFAULT_RPC_EVM_QUEUE),
  };
}

/** `--rpc-evmtimeout`: a Go-style duration (`5s`, `1.5s`, `300ms`) or milliseconds; at least 1 ms. */
function duration(raw: string | undefined, def: number): number {
  if (raw === undefined || raw === '') return def;
  const m = /^(\d{1,9}(?:\.\d{1,3})?)(ms|s)?$/.exec(raw.trim());
  const ms = m ? Math.round(Number(m[1]) * (m[2] === 's' ? 1000 : 1)) : Number.NaN;
  if (!(ms >= 1))
    throw new ConfigError(`--rpc-evmtimeout / NATIVE_RPC_EVMTIMEOUT must be a duration like 5s or 300ms, got ${raw}`);
  return ms;
}
