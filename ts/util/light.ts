/**
 * The light door of ts/util/: the node's version, importable before the folder itself loads (the flag table and the
 * command read them before anything else; docs/architecture.md, "Doors and layers"). Imports nothing heavy.
 */
export { NODE_VERSION } from './version.js';
