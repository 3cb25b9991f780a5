/**
 * State snapshots for state sync (`--snapshot-interval`, `--snapshot-keep`; docs/p2p.md, "State sync"): one
 * self-contained start and stop around the chain, so the node's start wires them in one call each.
 */
import type { Logger } from 'pino';
import type { Chain } from '../chain/index.js';
import type { SnapshotSource } from '../network/index.js';
import { SnapshotSchedule, snapshotSource } from '../snapshot/index.js';
import type { KvStore } from '../storage/index.js';
import type { NodeConfig } from './config.js';

const schedules = new WeakMap<Chain, SnapshotSchedule>();

/**
 * Take a snapshot of the state every `config.snapshotInterval` finalized blocks into `<data-dir>/snapshots`
 * (none when 0; unfinished ones of a previous run are removed either way). Returns the schedule (tests, serving).
 */
export function startStateSnapshots(config: NodeConfig, chain: Chain, db: KvStore, log: Logger): SnapshotSchedule {
  const schedule = new SnapshotSchedule(chain, db, {
    dataDir: config.dataDir,
    interval: config.snapshotInterval,
    keep: config.snapshotKeep,
    log: (level, fields, msg) => log[level](fields, msg),
  });
  schedules.set(chain, schedule);
  if (config.snapshotInterval > 0)
    log.info(
      { interval: config.snapshotInterval, keep: config.snapshotKeep, dir: schedule.directory.root },
      'state snapshots on',
    );
  return schedule;
}

/** What the node serves to peers (`P/snapshots/1`, `P/snapshot-chunk/1`): the snapshots it holds. */
export function servedSnapshots(chain: Chain): SnapshotSource | undefined {
  const schedule = schedules.get(chain);
  return schedule && snapshotSource(schedule.directory);
}

/** Stop taking snapshots (the one running is aborted): before the database closes. */
export async function stopStateSnapshots(chain: Chain): Promise<void> {
  await schedules.get(chain)?.stop();
  schedules.delete(chain);
}
