import { pino } from 'pino';
import { type NodeConfig, parseConfig, NativeNode } from '../../ts/node/index.js';
import { parseJsonExact, stringifyExact } from '../../ts/util/index.js';
import { tempDir } from './util.js';

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
