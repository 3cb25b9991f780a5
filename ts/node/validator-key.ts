import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type KeyPair, keyPairFromPrivate, privateKeyHex, randomKeyPair } from '../ledger/index.js';

const keyPath = (dataDir: string): string => join(dataDir, 'validator.key');

/** Write the node's validator key: `validator.key` (hex private key, mode 0600) in the data dir. */
export function saveValidatorKey(dataDir: string, key: KeyPair): void {
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(keyPath(dataDir), `${privateKeyHex(key)}\n`, { mode: 0o600 });
}

/** The node's validator key from the data dir, created on first start. */
export function loadOrCreateValidatorKey(dataDir: string): { key: KeyPair; created: boolean } {
  const path = keyPath(dataDir);
  if (existsSync(path)) return { key: keyPairFromPrivate(readFileSync(path, 'utf8').trim()), created: false };
  const key = randomKeyPair();
  saveValidatorKey(dataDir, key);
  return { key, created: true };
}
