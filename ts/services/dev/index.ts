export { DEV_ACCOUNT_COUNT, DevAccounts, UnknownAccountError, signMessage, signTypedData } from './accounts.js';
export { DevClock } from './clock.js';
export { DevChain, type DevChainContext } from './dev-chain.js';
export { DevMiner, MAX_MINE_BLOCKS, type MiningMode } from './miner.js';
export type { SendArgs } from './send.js';
export { type DevSnapshot, DevSnapshots } from './snapshots.js';
export { WARM_UP_INIT_CODE } from './warm-up.js';
