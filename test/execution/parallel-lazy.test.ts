import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { EvmSender, devParams, openChain } from '../../bench/evm-fixtures.js';
import { senderKeys } from '../../bench/fixtures.js';
import {
  closeParallelExecution,
  configureParallelExecution,
  defaultNodeParallelWorkers,
  lastParallelStats,
  readyWorkers,
} from '../../ts/execution/index.js';
import { randomKeyPair } from '../../ts/ledger/index.js';
import { parseConfig } from '../../ts/node/index.js';
import { waitFor } from '../helpers/util.js';

// The switch is process-wide: this file's tests run one after the other.
test.after.always(closeParallelExecution);

test.serial('a node runs blocks in parallel by default on two cores or more, and --parallel-evm-workers 0 turns it off', (t) => {
  const workers = parseConfig([], {}).parallelEvmWorkers;
  t.is(workers, defaultNodeParallelWorkers());
  t.is(workers > 0, availableParallelism() >= 2);
  t.is(parseConfig(['--parallel-evm-workers', '0'], {}).parallelEvmWorkers, 0);
});

test.serial(
  'lazy workers start with the first block that wants them; that block runs sequentially, the next in parallel',
  async (t) => {
    t.timeout(120_000);
    const senders = senderKeys(12).map((k) => new EvmSender(k));
    const dir = mkdtempSync(join(tmpdir(), 'native-parallel-lazy-'));
    const validator = randomKeyPair();
    const dev = await openChain(
      dir,
      devParams(
        validator,
        senders.map((s) => s.address),
      ),
      validator,
      100,
    );
    try {
      await closeParallelExecution();
      await configureParallelExecution({ workers: 1, minTxs: 8, lazy: true });
      t.is(readyWorkers(), 0, 'nothing started before a block wants workers');
      const transfers = (n = senders.length) =>
        senders.slice(0, n).map((s, i) => s.tx(senders[(i + 1) % senders.length].address, undefined, { value: 1n }));
      // Too small a block: still nothing.
      const small = await dev.chain.propose(transfers(4), validator, dev.chain.head.timestamp + 1);
      t.is(small.result.included.length, 4);
      await dev.chain.commit(small);
      t.is(readyWorkers(), 0);
      const before = lastParallelStats();
      const first = await dev.chain.propose(transfers(), validator, dev.chain.head.timestamp + 1);
      t.is(first.result.included.length, senders.length);
      t.is(lastParallelStats(), before, 'the first block that wants workers runs sequentially');
      await dev.chain.commit(first);
      await waitFor(() => readyWorkers() > 0, 60_000, 'the speculation worker loads');
      const txs = transfers();
      const par = await dev.chain.propose(txs, validator, dev.chain.head.timestamp + 1);
      t.not(lastParallelStats(), before, 'the next one runs in parallel');
      const root = par.block.state_root;
      dev.chain.abandon(par);
      await configureParallelExecution(null);
      const seq = await dev.chain.propose(txs, validator, dev.chain.head.timestamp + 1);
      t.is(seq.block.state_root, root, 'the same state root both ways');
    } finally {
      await configureParallelExecution(null);
      await dev.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
