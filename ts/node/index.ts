/**
 * The door of ts/node/: the only file other folders import from it (with interface.ts where it has one).
 * What it owns and what it may import: docs/architecture.md. Re-exports are added here as other folders need them.
 */
export { type NodeConfig, parseConfig, ConfigError } from './config.js';
export { NativeNode } from './node.js';
export { type TestnetNode, generateTestnet } from './testnet.js';
export { saveValidatorKey } from './validator-key.js';
