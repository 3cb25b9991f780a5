import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The node's P2P identity: a secp256k1 private key in `node.key` (hex, mode 0600) in the data dir,
 * created on first start. It is the libp2p peer id (`16Uiu2HA…`), stable across restarts, and separate
 * from the validator key that signs blocks (an operator may rotate one without the other).
 */
export function loadOrCreateNodeKey(dataDir: string): Uint8Array {
  const path = join(dataDir, 'node.key');
  if (existsSync(path)) return Buffer.from(readFileSync(path, 'utf8').trim(), 'hex');
  const key = randomBytes(32);
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(path, `${key.toString('hex')}\n`, { mode: 0o600 });
  return key;
}

export function saveNodeKey(dataDir: string, key: Uint8Array): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, 'node.key'), `${Buffer.from(key).toString('hex')}\n`, { mode: 0o600 });
}
