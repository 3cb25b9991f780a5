import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type KeyPair, keyPairFromPrivate, privateKeyHex, randomKeyPair } from '../ledger/keys.js';

/** The node's validator key: `validator.key` (hex private key, mode 0600) in the data dir, created on first start. */
export function loadOrCreateValidatorKey(dataDir: string): { key: KeyPair; created: boolean } {
  const path = join(dataDir, 'validator.key');
  if (existsSync(path)) return { key: keyPairFromPrivate(readFileSync(path, 'utf8').trim()), created: false };
  mkdirSync(dataDir, { recursive: true });
  const key = randomKeyPair();
  writeFileSync(path, `${privateKeyHex(key)}\n`, { mode: 0o600 });
  return { key, created: true };
}
