/**
 * What a node behind a load balancer needs from the wiring: the keys file of per-key quotas and the state
 * GET /ready reads (docs/operations.md, "Running a fleet"). The drain itself is ts/node/shutdown.ts.
 */
import type { Logger } from 'pino';
import { ApiKeyRegistry } from '../api/index.js';
import type { ReadinessSource } from '../services/index.js';
import type { KvStore } from '../storage/index.js';
import type { NodeConfig } from './config.js';

/** The keys file (`--api-keys`), read at start: a bad file stops the node (ConfigError-like, one line). */
export function loadApiKeys(config: NodeConfig, log: Logger): ApiKeyRegistry | null {
  if (!config.apiKeysFile) return null;
  const registry = ApiKeyRegistry.fromFile(config.apiKeysFile);
  log.info({ keys: registry.size, file: config.apiKeysFile }, 'API keys loaded (per-key quotas)');
  return registry;
}

/** A key no table uses: GET /ready reads it to learn that the database answers. */
const READY_PROBE_KEY = Buffer.from('ready-probe');

/** What GET /ready reads of the node (ts/services/readiness.ts). */
export function readinessSource(config: NodeConfig, db: KvStore, drain: { draining: boolean }): ReadinessSource {
  return {
    maxLagBlocks: config.readyMaxLagBlocks,
    maxAgeMs: config.readyMaxAgeMs,
    draining: () => drain.draining,
    dbOpen: () => {
      try {
        db.getManySync([READY_PROBE_KEY]);
        return true;
      } catch {
        return false;
      }
    },
  };
}
