/**
 * The verification service on its own: its own HTTP port and RocksDB, talking to one node per chain over
 * JSON-RPC (main.ts is the executable). A provider runs it apart from the nodes to scale it separately.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type HttpLogger, type HttpServer, startHttpServer } from '../http/index.js';
import { type KvStore, openRocksStore } from '../storage/index.js';
import { CompilePool, type CompilePoolOptions } from './compile-pool.js';
import type { ChainReader } from './interface.js';
import { RpcChainReader } from './rpc-reader.js';
import { createVerifyHandler } from './server.js';
import { VERIFY_CHAINS, VerificationService } from './service.js';
import { VerificationStore } from './store.js';

/** Sourcify server's port. */
export const DEFAULT_VERIFY_PORT = 5555;
/** Uploads carry every source of a project: larger than the node's API bodies. */
export const DEFAULT_VERIFY_MAX_BODY_BYTES = 32 * 1_048_576;

export interface StandaloneOptions {
  /** JSON-RPC URLs of the nodes, one per chain served. */
  nodeUrls: string[];
  nodeApiKey?: string;
  host: string;
  port: number;
  dataDir: string;
  solcDir?: string;
  publicUrl?: string;
  maxBodyBytes?: number;
  compile?: CompilePoolOptions;
  logger?: HttpLogger & { error(o: object, msg?: string): void };
}

export interface StandaloneService {
  service: VerificationService;
  http: HttpServer;
  close(): Promise<void>;
}

/** The service's configuration is wrong (a node on another chain, two nodes of one chain): exit 2. */
export class VerifyConfigError extends Error {}

/** Ask each node its chain: only 7119 and 7120, one node per chain. */
async function chainReaders(urls: string[], apiKey?: string): Promise<Map<number, ChainReader>> {
  if (urls.length === 0) throw new VerifyConfigError('--node-url is required (the JSON-RPC URL of a node)');
  const readers = new Map<number, ChainReader>();
  for (const url of urls) {
    const reader = new RpcChainReader({ url, apiKey });
    let id: number;
    try {
      id = await reader.chainId();
    } catch (err) {
      throw new VerifyConfigError(`cannot reach the node at ${url}: ${(err as Error).message}`);
    }
    if (!VERIFY_CHAINS.includes(id))
      throw new VerifyConfigError(`the node at ${url} is on chain ${id}; only chains 7119 and 7120 are verified`);
    if (readers.has(id)) throw new VerifyConfigError(`two nodes of chain ${id} given; one per chain`);
    readers.set(id, reader);
  }
  return readers;
}

export async function startStandalone(o: StandaloneOptions): Promise<StandaloneService> {
  const chains = await chainReaders(o.nodeUrls, o.nodeApiKey);
  mkdirSync(o.dataDir, { recursive: true });
  const db: KvStore = await openRocksStore(join(o.dataDir, 'db'));
  const service = new VerificationService({
    chains,
    store: new VerificationStore(db),
    compiler: new CompilePool({ ...o.compile, onError: (err) => o.logger?.error({ err }, 'compile worker failed') }),
    solcDir: o.solcDir,
    publicUrl: o.publicUrl,
  });
  let http: HttpServer;
  try {
    http = await startHttpServer(
      { host: o.host, port: o.port, maxBodyBytes: o.maxBodyBytes ?? DEFAULT_VERIFY_MAX_BODY_BYTES, logger: o.logger },
      createVerifyHandler(service, { onError: (err, where) => o.logger?.error({ err, where }, 'verification request failed') }),
    );
  } catch (err) {
    await service.close();
    await db.close();
    throw err;
  }
  return {
    service,
    http,
    close: async () => {
      await http.close();
      await service.close();
      await db.close();
    },
  };
}
