/**
 * Every command-line flag of the node once: its environment variable, its default as a user reads it and a
 * line of help. `parseConfig` builds its parser from this table and `--help` prints it, so the two (and the
 * README's table, which a test compares) cannot drift apart.
 */
import { DEFAULT_RATE_LIMIT_GLOBAL, DEFAULT_RATE_LIMIT_WINDOW_SECS, DEFAULT_RATE_LIMIT_WRITE } from '../api/light.js';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT } from '../http/light.js';
import { DEFAULT_MEMPOOL_LIMITS } from '../mempool/light.js';

export interface FlagSpec {
  /** Long name without the dashes. */
  name: string;
  type: 'string' | 'boolean';
  /** Environment variable read when the flag is absent. */
  env?: string;
  /** The default in words (it may depend on the network). */
  default: string;
  help: string;
  /** Placeholder of the value in the help text. */
  value?: string;
}

export const NODE_FLAGS: readonly FlagSpec[] = [
  { name: 'dev', type: 'boolean', default: 'off', help: 'the dev chain: funded test accounts, no rate limits, CORS *' },
  {
    name: 'network',
    type: 'string',
    env: 'NATIVE_NETWORK',
    default: 'mainnet',
    value: 'mainnet|testnet|dev',
    help: 'network preset',
  },
  {
    name: 'chain-id',
    type: 'string',
    env: 'NATIVE_CHAIN_ID',
    default: '7119 mainnet, 7120 testnet and dev',
    value: 'N',
    help: 'chain id',
  },
  { name: 'host', type: 'string', env: 'NATIVE_API_HOST', default: '127.0.0.1', value: 'ADDR', help: 'API listen address' },
  { name: 'port', type: 'string', env: 'NATIVE_API_PORT', default: '8545 (testnet 9545)', value: 'N', help: 'API port' },
  {
    name: 'data-dir',
    type: 'string',
    env: 'NATIVE_DATA_DIR',
    default: 'data/<network>',
    value: 'DIR',
    help: 'database and validator key',
  },
  {
    name: 'api-key',
    type: 'string',
    env: 'NATIVE_API_KEY',
    default: 'unset (no key checks)',
    value: 'KEY',
    help: 'X-API-Key of write and admin routes; at least 16 characters',
  },
  {
    name: 'cors-origin',
    type: 'string',
    env: 'NATIVE_CORS_ORIGIN',
    default: 'unset (no CORS); dev: *',
    value: 'ORIGIN',
    help: '* or one origin',
  },
  {
    name: 'genesis',
    type: 'string',
    env: 'NATIVE_GENESIS',
    default: 'preset with this node as the only validator',
    value: 'FILE',
    help: 'genesis file',
  },
  {
    name: 'block-time-ms',
    type: 'string',
    env: 'NATIVE_BLOCK_TIME_MS',
    default: '1000',
    value: 'MS',
    help: 'block interval (at least 50); dev: 0 = automine, a block per transaction',
  },
  { name: 'window-size', type: 'string', env: 'CHAIN_WINDOW_SIZE', default: '1000', value: 'N', help: 'blocks kept in memory' },
  {
    name: 'history',
    type: 'string',
    env: 'NATIVE_HISTORY',
    default: 'full',
    value: 'full|N',
    help: 'state history kept for reads at past heights: every block, or the last N blocks',
  },
  {
    name: 'state-cache-mb',
    type: 'string',
    env: 'NATIVE_STATE_CACHE_MB',
    default: '256',
    value: 'MB',
    help: 'state values cached in memory (the rest are read from the database)',
  },
  {
    name: 'snapshot-interval',
    type: 'string',
    env: 'NATIVE_SNAPSHOT_INTERVAL',
    default: '1000; dev: 0',
    value: 'N',
    help: 'state snapshot for state sync every N finalized blocks (0 = off)',
  },
  {
    name: 'snapshot-keep',
    type: 'string',
    env: 'NATIVE_SNAPSHOT_KEEP',
    default: '2',
    value: 'N',
    help: 'state snapshots kept (the newest)',
  },
  {
    name: 'state-sync',
    type: 'boolean',
    default: 'off',
    help: 'join from a state snapshot offered by the peers (a fresh data dir), then block-sync from its height',
  },
  {
    name: 'state-sync-trust',
    type: 'string',
    env: 'NATIVE_STATE_SYNC_TRUST',
    default: 'none',
    value: 'HEIGHT:HASH',
    help: 'with --state-sync: restore only the snapshot of this block (its height and hash)',
  },
  {
    name: 'tx-journal',
    type: 'string',
    env: 'NATIVE_TX_JOURNAL',
    default: 'on',
    value: 'on|off',
    help: 'journal accepted transactions (fsync before the answer) and replay them after a crash',
  },
  {
    name: 'max-block-txs',
    type: 'string',
    env: 'NATIVE_MAX_BLOCK_TXS',
    default: '20000',
    value: 'N',
    help: 'transactions per block',
  },
  {
    name: 'max-pending-per-sender',
    type: 'string',
    env: 'NATIVE_MAX_PENDING_PER_SENDER',
    default: String(DEFAULT_MEMPOOL_LIMITS.maxPerSender),
    value: 'N',
    help: 'pending transactions per sender',
  },
  {
    name: 'max-mempool',
    type: 'string',
    env: 'NATIVE_MAX_MEMPOOL',
    default: String(DEFAULT_MEMPOOL_LIMITS.maxTotal),
    value: 'N',
    help: 'pending transactions in all',
  },
  {
    name: 'http-backend',
    type: 'string',
    env: 'NATIVE_HTTP_BACKEND',
    default: 'auto (uWebSockets.js when it loads)',
    value: 'auto|uws|node',
    help: 'HTTP server',
  },
  {
    name: 'log-level',
    type: 'string',
    env: 'NATIVE_LOG_LEVEL',
    default: 'info',
    value: 'LEVEL',
    help: 'trace, debug, info, warn, error, fatal or silent',
  },
  {
    name: 'log-format',
    type: 'string',
    env: 'NATIVE_LOG_FORMAT',
    default: 'pretty on a terminal, else json',
    value: 'pretty|json',
    help: 'log lines for people or for machines',
  },
  {
    name: 'name',
    type: 'string',
    env: 'NATIVE_NODE_NAME',
    default: 'native-node-<network>',
    value: 'NAME',
    help: 'node name in /health and logs',
  },
  {
    name: 'rate-limit-global',
    type: 'string',
    env: 'NATIVE_RATE_LIMIT_GLOBAL',
    default: `${DEFAULT_RATE_LIMIT_GLOBAL}; dev: 0`,
    value: 'N',
    help: 'requests per client IP per window (0 = unlimited)',
  },
  {
    name: 'rate-limit-write',
    type: 'string',
    env: 'NATIVE_RATE_LIMIT_WRITE',
    default: `${DEFAULT_RATE_LIMIT_WRITE}; dev: 0`,
    value: 'N',
    help: 'writes per client IP per window (0 = unlimited)',
  },
  {
    name: 'rate-limit-window-secs',
    type: 'string',
    env: 'NATIVE_RATE_LIMIT_WINDOW_SECS',
    default: String(DEFAULT_RATE_LIMIT_WINDOW_SECS),
    value: 'S',
    help: 'rate limit window',
  },
  {
    name: 'trusted-proxies',
    type: 'string',
    env: 'NATIVE_TRUSTED_PROXIES',
    default: 'unset (X-Forwarded-For ignored)',
    value: 'LIST',
    help: 'comma-separated IPs / CIDRs',
  },
  {
    name: 'max-body-bytes',
    type: 'string',
    env: 'NATIVE_MAX_BODY_BYTES',
    default: String(DEFAULT_MAX_BODY_BYTES),
    value: 'N',
    help: 'largest request body (413 beyond)',
  },
  {
    name: 'max-concurrent',
    type: 'string',
    env: 'NATIVE_MAX_CONCURRENT',
    default: String(DEFAULT_MAX_CONCURRENT),
    value: 'N',
    help: 'requests in flight (503 beyond)',
  },
  {
    name: 'block-pack-gas',
    type: 'string',
    env: 'NATIVE_BLOCK_PACK_GAS',
    default: '5000000',
    value: 'GAS',
    help: 'EVM gas a proposer packs per block (the 30M limit stays the validity rule; docs/evm.md)',
  },
  {
    name: 'block-pack-ms',
    type: 'string',
    env: 'NATIVE_BLOCK_PACK_MS',
    default: '40% of the block time',
    value: 'MS',
    help: 'beyond --block-pack-gas, pack EVM transactions while the block fits this execution time (0: off; docs/evm.md)',
  },
  {
    name: 'rpc-gascap',
    type: 'string',
    env: 'NATIVE_RPC_GASCAP',
    default: '50000000',
    value: 'GAS',
    help: 'gas cap of eth_call / eth_estimateGas (0 = none)',
  },
  {
    name: 'rpc-evmtimeout',
    type: 'string',
    env: 'NATIVE_RPC_EVMTIMEOUT',
    default: '5s',
    value: 'DURATION',
    help: 'time limit of eth_call / eth_estimateGas',
  },
  {
    name: 'rpc-evm-workers',
    type: 'string',
    env: 'NATIVE_RPC_EVM_WORKERS',
    default: 'cores - 1 (1 to 4)',
    value: 'N',
    help: 'call worker threads',
  },
  {
    name: 'rpc-evm-inline',
    type: 'string',
    env: 'NATIVE_RPC_EVM_INLINE',
    default: '100ms on --dev, else 0',
    value: 'DURATION',
    help: 'a call runs on the main thread up to this long before moving to a worker (0 = workers only)',
  },
  {
    name: 'rpc-evm-queue',
    type: 'string',
    env: 'NATIVE_RPC_EVM_QUEUE',
    default: '32',
    value: 'N',
    help: 'calls waiting for a worker (-32005 / 503 beyond)',
  },
  {
    name: 'ws',
    type: 'boolean',
    env: 'NATIVE_WS',
    default: 'off; dev: on',
    help: 'JSON-RPC over WebSocket at ws://HOST:PORT/rpc (eth_subscribe); NATIVE_WS=0 turns it off on --dev',
  },
  {
    name: 'anvil-compat',
    type: 'boolean',
    default: 'off',
    help: "dev only: web3_clientVersion starts with anvil/ (Hardhat's network helpers accept only anvil/Hardhat nodes)",
  },
  {
    name: 'hardfork',
    type: 'string',
    default: 'osaka (a new dev chain; an existing one keeps its own)',
    value: 'NAME',
    help: 'dev only: EVM hardfork of a new dev chain: london, paris, shanghai, cancun, prague or osaka',
  },
  {
    name: 'dev-accounts',
    type: 'string',
    default: '10',
    value: 'N',
    help: 'dev only: accounts of the dev mnemonic funded at genesis and signed for (eth_accounts)',
  },
  {
    name: 'dev-balance',
    type: 'string',
    default: '10000',
    value: 'COINS',
    help: 'dev only: genesis balance of each dev account, in coins (1 coin = 10^18 wei, as anvil --balance)',
  },
  {
    name: 'gas-limit',
    type: 'string',
    default: '30000000',
    value: 'GAS',
    help: 'dev only: the block gas limit (at least 21000)',
  },
  {
    name: 'allow-unlimited-contract-size',
    type: 'boolean',
    default: 'off',
    help: 'dev only: no EIP-170 code size and EIP-3860 initcode size limits (as Hardhat and anvil)',
  },
  {
    name: 'ws-max-connections',
    type: 'string',
    env: 'NATIVE_WS_MAX_CONNECTIONS',
    default: '1000',
    value: 'N',
    help: 'open WebSocket connections (503 beyond)',
  },
  {
    name: 'ws-max-buffered-bytes',
    type: 'string',
    env: 'NATIVE_WS_MAX_BUFFERED_BYTES',
    default: '16777216',
    value: 'N',
    help: 'bytes queued for a WebSocket client that does not read before it is dropped',
  },
  {
    name: 'p2p-port',
    type: 'string',
    env: 'NATIVE_P2P_PORT',
    default: 'off (a single-node chain)',
    value: 'PORT',
    help: 'P2P listen port (docs/p2p.md)',
  },
  { name: 'p2p-host', type: 'string', env: 'NATIVE_P2P_HOST', default: '0.0.0.0', value: 'HOST', help: 'P2P listen address' },
  {
    name: 'peers',
    type: 'string',
    env: 'NATIVE_PEERS',
    default: 'none',
    value: 'LIST',
    help: 'static peers: comma-separated multiaddrs /ip4/…/tcp/…/p2p/<peer id>',
  },
  {
    name: 'role',
    type: 'string',
    env: 'NATIVE_ROLE',
    default: 'validator',
    value: 'validator|full',
    help: 'full: follow the network, never propose',
  },
  {
    name: 'grpc-port',
    type: 'string',
    env: 'NATIVE_GRPC_PORT',
    default: '50051 on dev; off on mainnet and testnet',
    value: 'N|off',
    help: 'gRPC (native.v1, HTTP/2) port on --host; 0 = any free port (docs/grpc.md)',
  },
  {
    name: 'grpc-tls-cert',
    type: 'string',
    env: 'NATIVE_GRPC_TLS_CERT',
    default: 'unset (plaintext)',
    value: 'FILE',
    help: 'PEM certificate chain: gRPC over TLS (with --grpc-tls-key)',
  },
  {
    name: 'grpc-tls-key',
    type: 'string',
    env: 'NATIVE_GRPC_TLS_KEY',
    default: 'unset (plaintext)',
    value: 'FILE',
    help: 'PEM private key of --grpc-tls-cert',
  },
  {
    name: 'grpc-reflection',
    type: 'boolean',
    env: 'NATIVE_GRPC_REFLECTION',
    default: 'off',
    help: 'serve gRPC server reflection (grpc.reflection v1 and v1alpha)',
  },
  {
    name: 'solc-dir',
    type: 'string',
    env: 'NATIVE_SOLC_DIR',
    default: 'unset (the bundled solc only)',
    value: 'DIR',
    help: 'soljson-v<version>.js compilers for contract verification (docs/verification.md)',
  },
  {
    name: 'verify-timeout',
    type: 'string',
    env: 'NATIVE_VERIFY_TIMEOUT',
    default: '60s',
    value: 'DURATION',
    help: "time limit of a verification's compilation",
  },
  {
    name: 'verify-memory-mb',
    type: 'string',
    env: 'NATIVE_VERIFY_MEMORY_MB',
    default: '1024',
    value: 'N',
    help: "memory limit of a verification's compilation",
  },
  {
    name: 'ready-max-lag-blocks',
    type: 'string',
    env: 'NATIVE_READY_MAX_LAG_BLOCKS',
    default: '2',
    value: 'N',
    help: 'GET /ready: blocks the head may trail the best proven peer height (docs/operations.md)',
  },
  {
    name: 'ready-max-age',
    type: 'string',
    env: 'NATIVE_READY_MAX_AGE',
    default: '10 block times; dev: off',
    value: 'DURATION|off',
    help: 'GET /ready: largest age of the head (10s, 500ms, or seconds)',
  },
  {
    name: 'drain-secs',
    type: 'string',
    env: 'NATIVE_DRAIN_SECS',
    default: '5; dev: 0',
    value: 'S',
    help: 'SIGTERM: keep answering (GET /ready 503) this long before closing the listener',
  },
  {
    name: 'shutdown-grace-secs',
    type: 'string',
    env: 'NATIVE_SHUTDOWN_GRACE_SECS',
    default: '10',
    value: 'S',
    help: 'SIGTERM: time in-flight requests get to finish once the listener is closed',
  },
  {
    name: 'api-keys',
    type: 'string',
    env: 'NATIVE_API_KEYS_FILE',
    default: 'unset (per-IP limits only)',
    value: 'FILE',
    help: 'per-key quotas, weights and allow/deny lists (JSON; re-read on SIGHUP; docs/operations.md)',
  },
  { name: 'help', type: 'boolean', default: 'off', help: 'print this help and exit' },
  { name: 'version', type: 'boolean', default: 'off', help: 'print the version and exit' },
];

/** The `--help` text: usage, then one line per flag with its environment variable and default. */
/**
 * `--help` and `--version` win over everything else (and over bad values), as in most tools; main.ts asks this
 * before it loads the rest of the node.
 */
export function infoCommand(argv: readonly string[]): 'help' | 'version' | null {
  if (argv.includes('--help') || argv.includes('-h')) return 'help';
  if (argv.includes('--version')) return 'version';
  return null;
}

export function nodeHelp(version: string): string {
  const rows = NODE_FLAGS.map((f) => {
    const left = `--${f.name}${f.value ? ` ${f.value}` : ''}`;
    const env = f.env ? `  [${f.env}]` : '';
    return `  ${left.padEnd(36)} ${f.help}${env}\n  ${''.padEnd(36)} default: ${f.default}`;
  });
  return [
    `native-node ${version}: a layer-1 blockchain node (REST, JSON-RPC, embedded EVM)`,
    '',
    'Usage: native-node [--dev | --network NAME] [options]',
    '',
    'Flags win over environment variables, which win over the network preset.',
    '',
    ...rows,
    '',
  ].join('\n');
}
