import test from 'ava';
import { runDifferential } from '../../bench/parallel-blocks.js';
import { closeParallelExecution } from '../../ts/execution/index.js';

// One worker process of ava runs this file's tests one after the other (they share the process-wide switch).
test.after.always(closeParallelExecution);

test.serial(
  'parallel execution is byte for byte sequential execution: random blocks, producer and importer (seeded)',
  async (t) => {
    t.timeout(600_000);
    const blocks = Number(process.env.PARALLEL_DIFF_BLOCKS ?? 240);
    const s = await runDifferential({
      seed: 27,
      blocks,
      maxTxs: 40,
      // Small blocks go parallel too, and two workers, so every path is taken on a 2-core machine.
      parallel: { workers: 2, minTxs: 2, mainShare: 0.25 },
      awaitEvery: 2,
    });
    t.is(s.blocks, blocks);
    t.log(
      `${s.blocks} blocks, ${s.txs} transactions; worker results committed ${s.committed}, conflicts ${s.conflicts}, misses ${s.misses}, late ${s.late}`,
    );
    // Every way a worker's result can go was taken: committed as it is, discarded for a changed read, missed.
    t.true(s.committed > 100);
    t.true(s.conflicts > 10);
    t.true(s.misses > 10);
  },
);
