/**
 * The dev chain's test controls (`--dev` only; docs/dev-chain.md): accounts the node signs for and impersonation,
 * the clock, automine and manual mining, direct state writes, snapshots and reset. It sits on the queries of
 * ts/services; NodeContext carries it as a DevChainView.
 */
export { DEV_ACCOUNT_COUNT, DevAccounts, UnknownAccountError, signMessage, signTypedData } from './accounts.js';
export { DevClock } from './clock.js';
export { DevChain, type DevChainContext } from './dev-chain.js';
export { DevMiner, MAX_MINE_BLOCKS, type MiningMode } from './miner.js';
export type { SendArgs } from './send.js';
export { type DevSnapshot, DevSnapshots } from './snapshots.js';
export { WARM_UP_INIT_CODE } from './warm-up.js';
export { devChainOf } from './dev-chain.js';
