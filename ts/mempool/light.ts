/**
 * The light door of ts/mempool/: the default pool limits, importable before the folder itself loads (the flag table and the
 * command read them before anything else; docs/architecture.md, "Doors and layers"). Imports nothing heavy.
 */
export { DEFAULT_MEMPOOL_LIMITS } from './mempool.js';
