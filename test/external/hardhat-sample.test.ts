/**
 * Oracle: a real, unmodified Hardhat project's test suite against the dev node. Hardhat 2 ships its sample
 * project in the npm package (node_modules/hardhat/sample-projects/javascript: the Lock contract and its
 * tests with loadFixture, time helpers, revertedWith, emit and changeEtherBalances, MIT licensed). The test
 * copies it as shipped to a temp dir, adds our hardhat.config.js (a `native` network), links the toolbox
 * that scripts/setup.sh installed from the npm registry (test/external/hardhat-sample), and runs
 * `npx hardhat test --network native` against a --dev node with automine.
 */
import test from 'ava';
import { startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';
import { hardhat, prepareSampleProject, sampleProjectInstalled } from './hardhat-project.js';

test('Hardhat sample project (Lock): its unmodified test suite passes fully against --dev with automine', async (t) => {
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
  t.is(run.code, 0, out);
  // Every test of the suite ran and passed (mocha's summary), none skipped.
  t.regex(run.stdout, /\b9 passing\b/, out);
  t.notRegex(run.stdout, /failing|pending/, out);
  t.log(`hardhat test --network native: ${(run.ms / 1000).toFixed(1)} s`);
});
