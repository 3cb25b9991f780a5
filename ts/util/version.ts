/**
 * The node's version, in a module that imports nothing: `--version` and `--help` print it before the node's
 * other modules load (ts/node/main.ts).
 */
export const NODE_VERSION = '0.1.0';
