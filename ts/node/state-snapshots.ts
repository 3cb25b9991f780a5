/**
 * State snapshots for state sync (`--snapshot-interval`, `--snapshot-keep`; docs/p2p.md, "State sync"): one
 * self-contained start and stop around the chain, so the node's start wires them in one call each.
 */
import type { Logger } from 'pino';
import type { Chain } from '../chain/index.js';
import type { SnapshotSource } from '../network/index.js';
import { type CutLimits, DEFAULT_CUT_LIMITS, SnapshotSchedule, snapshotSource } from '../snapshot/index.js';
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
    limits: testCutLimits(log),
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

/**
 * Test-only (docs/p2p.md, "State sync", "Fault tests"): `NATIVE_TEST_SNAPSHOT_CHUNK_BYTES=N` packs chunks of
 * about N bytes instead of 2 MiB, so that a devnet's state of a few dozen entries makes a dozen chunks and the
 * fault tests with real processes can hold, corrupt or lose some of them. Unset (always, outside tests): the
 * default cut. Every node of a network must use the same value (it changes the manifest, hence the id).
 */
function testCutLimits(log: Logger): CutLimits | undefined {
  const raw = process.env.NATIVE_TEST_SNAPSHOT_CHUNK_BYTES;
  if (raw === undefined || raw === '') return undefined;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < 1) {
    log.warn({ value: raw }, 'NATIVE_TEST_SNAPSHOT_CHUNK_BYTES ignored: not a positive integer');
    return undefined;
  }
  log.warn({ chunk_bytes: Number(raw) }, 'test-only snapshot chunk size in use (NATIVE_TEST_SNAPSHOT_CHUNK_BYTES)');
  return { ...DEFAULT_CUT_LIMITS, chunkTargetBytes: Number(raw) };
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
