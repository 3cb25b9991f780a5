/**
 * The light door of ts/api/: the spec's default rate limits, importable before the folder itself loads (the flag table and the
 * command read them before anything else; docs/architecture.md, "Doors and layers"). Imports nothing heavy.
 */
export { DEFAULT_RATE_LIMIT_GLOBAL, DEFAULT_RATE_LIMIT_WINDOW_SECS, DEFAULT_RATE_LIMIT_WRITE } from './limits.js';
