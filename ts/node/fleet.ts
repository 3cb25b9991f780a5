/**
 * What a node behind a load balancer needs from the wiring: the keys file of per-key quotas and the state
 * GET /ready reads (docs/operations.md, "Running a fleet"). The drain itself is ts/node/shutdown.ts.
 */
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { ApiKeyRegistry, type KeyHooks } from '../api/index.js';

import { ApiKeyMetrics } from '../metrics/index.js';
import type { ReadinessSource } from '../services/index.js';
import type { KvStore } from '../storage/index.js';
import type { NodeConfig } from './config.js';

/**
 * The keys file (`--api-keys`), read at start (a bad file stops the node with one line naming the field), and
 * the API handler's hooks that count keyed requests in `registry` by the key's label.
 */
export function keyQuotas(
  config: NodeConfig,
  log: Logger,
  registry: Registry,
): { apiKeys: ApiKeyRegistry | null; keyHooks: KeyHooks } {
  const metrics = new ApiKeyMetrics(registry);
  const keyHooks: KeyHooks = {
    onKeyRequest: (label, weight) => metrics.admitted(label, weight),
    onKeyRefused: (label, reason) => metrics.refusedBy(label, reason),
  };
  if (!config.apiKeysFile) return { apiKeys: null, keyHooks };
  const apiKeys = ApiKeyRegistry.fromFile(config.apiKeysFile);
  log.info({ keys: apiKeys.size, file: config.apiKeysFile }, 'API keys loaded (per-key quotas)');
  return { apiKeys, keyHooks };
}

/** SIGHUP: re-read the keys file; a bad file keeps the keys in force (logged). */
export function reloadApiKeys(apiKeys: ApiKeyRegistry | null, config: NodeConfig, log: Logger): void {
  if (!apiKeys || !config.apiKeysFile) return;
  try {
    apiKeys.reload(config.apiKeysFile);
    log.info({ keys: apiKeys.size, file: config.apiKeysFile }, 'API keys reloaded');
  } catch (err) {
    log.error({ err: (err as Error).message }, 'API keys file not reloaded; the keys in force stay');
  }
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
