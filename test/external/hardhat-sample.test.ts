/**
 * Oracle: a real, unmodified Hardhat project's test suite against the dev node. Hardhat 2 ships its sample
 * project in the npm package (node_modules/hardhat/sample-projects/javascript: the Lock contract and its
 * tests with loadFixture, time helpers, revertedWith, emit and changeEtherBalances, MIT licensed). The test
 * copies it as shipped to a temp dir, adds our hardhat.config.js (a `native` network), links the toolbox
 * that scripts/setup.sh installed from the npm registry (test/external/hardhat-sample), and runs
 * `npx hardhat test --network native` against a --dev node with automine.
 */
import test from 'ava';
import { rpc } from '../helpers/evm.js';
import { startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';
import { hardhat, prepareSampleProject, sampleProjectInstalled } from './hardhat-project.js';

test('Hardhat sample project (Lock): its unmodified test suite against --dev with automine (all 9 pass once evm_snapshot exists)', async (t) => {
  t.timeout(300_000);
  if (!sampleProjectInstalled()) {
    t.fail('test/external/hardhat-sample is not installed: run scripts/setup.sh');
    return;
  }
  const n = await startTestNode({ blockTimeMs: 0, anvilCompat: true });
  t.teardown(() => n.stop());
  const tmp = tempDir('native-hardhat-sample-');
  t.teardown(tmp.cleanup);
  prepareSampleProject(tmp.dir);
  const run = await hardhat(tmp.dir, ['test', '--network', 'native'], { NATIVE_RPC_URL: n.url }, 240_000);
  const out = `${run.stdout}\n${run.stderr}`;
  const snapshots = (await rpc(n.url, 'evm_snapshot')).error?.code !== -32601;
  if (!snapshots) {
    // evm_snapshot / evm_revert are built on issue 10's Chain.rollbackTo, not on main yet (docs/dev-chain.md,
    // "Snapshots and reset"). Until then the one test without loadFixture must pass, and every other test
    // fail only because loadFixture's evm_snapshot is missing.
    t.regex(run.stdout, /\b1 passing\b/, out);
    t.regex(run.stdout, /\b8 failing\b/, out);
    t.is(run.stdout.match(/the method evm_snapshot does not exist\/is not available/g)?.length, 8, out);
    return;
  }
  t.is(run.code, 0, out);
  // Every test of the suite ran and passed (mocha's summary), none skipped.
  t.regex(run.stdout, /\b9 passing\b/, out);
  t.notRegex(run.stdout, /failing|pending/, out);
  t.log(`hardhat test --network native: ${(run.ms / 1000).toFixed(1)} s`);
});
