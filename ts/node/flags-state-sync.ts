/** The state sync flags of the node's flag table (./flags.ts): taking snapshots, and joining from one (docs/p2p.md, "State sync"). */
import type { FlagSpec } from './flag-spec.js';

export const STATE_SYNC_FLAGS: readonly FlagSpec[] = [
  {
    name: 'snapshot-interval',
    type: 'string',
    env: 'NATIVE_SNAPSHOT_INTERVAL',
    default: '1000; dev: 0',
    value: 'N',
    help: 'state snapshot for state sync every N finalized blocks (0 = off)',
  },
  {
    name: 'snapshot-keep',
    type: 'string',
    env: 'NATIVE_SNAPSHOT_KEEP',
    default: '2',
    value: 'N',
    help: 'state snapshots kept (the newest)',
  },
  {
    name: 'state-sync',
    type: 'boolean',
    default: 'off',
    help: 'join from a state snapshot offered by the peers (a fresh data dir), then block-sync from its height',
  },
  {
    name: 'state-sync-trust',
    type: 'string',
    env: 'NATIVE_STATE_SYNC_TRUST',
    default: 'none',
    value: 'HEIGHT:HASH',
    help: 'with --state-sync: restore only the snapshot of this block (its height and hash)',
  },
];
