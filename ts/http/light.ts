/**
 * The light door of ts/http/: the default body and concurrency limits, importable before the folder itself loads (the flag table and the
 * command read them before anything else; docs/architecture.md, "Doors and layers"). Imports nothing heavy.
 */
export { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONCURRENT } from './common.js';
