import { pino } from 'pino';
import { type NodeConfig, parseConfig } from '../../ts/node/config.js';
import { NativeNode } from '../../ts/node/node.js';
import { parseJsonExact, stringifyExact } from '../../ts/util/json.js';
import { tempDir } from './util.js';

export interface TestNode {
  node: NativeNode;
  url: string;
  dataDir: string;
  stop(): Promise<void>;
}

/** A real dev node on 127.0.0.1 (ephemeral port) with its own RocksDB in a temp dir. */
export async function startTestNode(overrides: Partial<NodeConfig> = {}, env: NodeJS.ProcessEnv = {}): Promise<TestNode> {
  const tmp = tempDir();
  const config: NodeConfig = {
    ...parseConfig(['--dev'], env),
    apiPort: 0,
    dataDir: tmp.dir,
    blockTimeMs: 200,
    logLevel: 'silent',
    ...overrides,
  };
  const node = await NativeNode.start(config, pino({ level: 'silent' }));
  return {
    node,
    url: `http://127.0.0.1:${node.http.port}`,
    dataDir: tmp.dir,
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
