/** The audit log (config at start, auth failures, admin calls) in the node's database. */
import type { Logger } from 'pino';
import { AuditLog, redactConfig } from '../../services/index.js';
import type { KvStore } from '../../storage/index.js';
import type { NodeConfig } from '../config.js';
import type { Built } from './stops.js';

/** True for addresses only this machine can reach. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || host.startsWith('127.');
}

/** Opens the audit log and records the configuration in force (secrets redacted). */
export async function buildAudit(config: NodeConfig, db: KvStore, log: Logger): Promise<Built<{ audit: AuditLog }>> {
  const audit = await AuditLog.open(db, { onError: (err) => log.error({ err }, 'audit log write failed') });
  audit.record('config', { ...redactConfig(config), api_key_set: config.apiKey !== undefined });
  if (!config.apiKey && !isLoopback(config.apiHost)) {
    log.warn({ host: config.apiHost }, 'NATIVE_API_KEY is not set: write and admin endpoints are open to every client');
  }
  return { audit, stop: () => audit.close() };
}
