#!/usr/bin/env node
/**
 * The standalone verification service: `node dist/ts/verify/main.js --node-url http://127.0.0.1:8545 --port 5555`.
 * Exit codes: 1 it could not start, 2 bad configuration.
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { ListenError } from '../http/index.js';
import { DEFAULT_COMPILE_MEMORY_MB, DEFAULT_COMPILE_TIMEOUT_MS, DEFAULT_COMPILE_WORKERS } from './compile-pool.js';
import {
  DEFAULT_VERIFY_MAX_BODY_BYTES,
  DEFAULT_VERIFY_PORT,
  type StandaloneService,
  VerifyConfigError,
  startStandalone,
} from './standalone.js';

const HELP = `native-verify: a Sourcify-compatible contract verification service for chains 7119 and 7120

Usage: node dist/ts/verify/main.js --node-url URL [--node-url URL] [options]

  --node-url URL          JSON-RPC URL of a node (one per chain served; repeat or comma-separate)  [NATIVE_VERIFY_NODE_URL]
  --node-api-key KEY      X-API-Key for the nodes' JSON-RPC, when they check one                   [NATIVE_API_KEY]
  --host ADDR             listen address (default 127.0.0.1)                                        [NATIVE_VERIFY_HOST]
  --port N                listen port (default ${DEFAULT_VERIFY_PORT}; 0 = any free port)                         [NATIVE_VERIFY_PORT]
  --data-dir DIR          where verified contracts are stored (default data/verify)                 [NATIVE_VERIFY_DATA_DIR]
  --solc-dir DIR          soljson-v<version>.js files of compilers besides the bundled one          [NATIVE_SOLC_DIR]
  --public-url URL        base of the file URLs in /files/tree answers (default: paths only)        [NATIVE_VERIFY_PUBLIC_URL]
  --compile-timeout S     seconds a compilation may take (default ${DEFAULT_COMPILE_TIMEOUT_MS / 1000})
  --compile-memory-mb N   memory a compilation may use (default ${DEFAULT_COMPILE_MEMORY_MB})
  --compile-workers N     compilations at once (default ${DEFAULT_COMPILE_WORKERS})
  --max-body-bytes N      largest upload (default ${DEFAULT_VERIFY_MAX_BODY_BYTES})
  --log-level LEVEL       trace, debug, info, warn, error or silent (default info)
  --help                  print this help
`;

function positive(raw: string | undefined, name: string, def: number): number {
  if (raw === undefined) return def;
  const n = Number(raw);
  if (!(n > 0) || !Number.isFinite(n)) throw new VerifyConfigError(`--${name} must be a positive number, got ${raw}`);
  return n;
}

async function main(): Promise<void> {
  let values: Record<string, string | string[] | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        'node-url': { type: 'string', multiple: true },
        'node-api-key': { type: 'string' },
        host: { type: 'string' },
        port: { type: 'string' },
        'data-dir': { type: 'string' },
        'solc-dir': { type: 'string' },
        'public-url': { type: 'string' },
        'compile-timeout': { type: 'string' },
        'compile-memory-mb': { type: 'string' },
        'compile-workers': { type: 'string' },
        'max-body-bytes': { type: 'string' },
        'log-level': { type: 'string' },
        help: { type: 'boolean' },
      },
      strict: true,
    }));
  } catch (err) {
    process.stderr.write(`config error: ${(err as Error).message}\n`);
    process.exit(2);
  }
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const env = process.env;
  const str = (name: string, envName?: string): string | undefined =>
    (values[name] as string | undefined) ?? (envName ? env[envName] : undefined);
  const log = pino({ level: str('log-level') ?? 'info', base: { service: 'native-verify' } });
  let svc: StandaloneService;
  try {
    const urls = (
      (values['node-url'] as string[] | undefined) ?? (env.NATIVE_VERIFY_NODE_URL ? [env.NATIVE_VERIFY_NODE_URL] : [])
    )
      .flatMap((u) => u.split(','))
      .map((u) => u.trim())
      .filter((u) => u !== '');
    const port = str('port', 'NATIVE_VERIFY_PORT');
    svc = await startStandalone({
      nodeUrls: urls,
      nodeApiKey: str('node-api-key', 'NATIVE_API_KEY'),
      host: str('host', 'NATIVE_VERIFY_HOST') ?? '127.0.0.1',
      port: port === undefined ? DEFAULT_VERIFY_PORT : Number.parseInt(port, 10),
      dataDir: str('data-dir', 'NATIVE_VERIFY_DATA_DIR') ?? 'data/verify',
      solcDir: str('solc-dir', 'NATIVE_SOLC_DIR'),
      publicUrl: str('public-url', 'NATIVE_VERIFY_PUBLIC_URL'),
      maxBodyBytes: positive(str('max-body-bytes'), 'max-body-bytes', DEFAULT_VERIFY_MAX_BODY_BYTES),
      compile: {
        timeoutMs: positive(str('compile-timeout'), 'compile-timeout', DEFAULT_COMPILE_TIMEOUT_MS / 1000) * 1000,
        memoryMb: positive(str('compile-memory-mb'), 'compile-memory-mb', DEFAULT_COMPILE_MEMORY_MB),
        workers: Math.floor(positive(str('compile-workers'), 'compile-workers', DEFAULT_COMPILE_WORKERS)),
      },
      logger: log,
    });
  } catch (err) {
    if (err instanceof VerifyConfigError) {
      process.stderr.write(`config error: ${err.message}\n`);
      process.exit(2);
    }
    if (err instanceof ListenError) {
      process.stderr.write(`error: ${err.message}\n`);
      process.exit(1);
    }
    throw err;
  }
  log.info(
    { host: str('host', 'NATIVE_VERIFY_HOST') ?? '127.0.0.1', port: svc.http.port, chains: svc.service.servedChains() },
    'verification service listening',
  );
  const shutdown = (signal: string): void => {
    log.info({ signal }, 'shutting down');
    svc.close().then(
      () => process.exit(0),
      (err) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', () => shutdown('SIGINT'));
  process.once('SIGTERM', () => shutdown('SIGTERM'));
}

main().catch((err) => {
  process.stderr.write(`fatal: ${(err as Error).stack ?? err}\n`);
  process.exit(1);
});
