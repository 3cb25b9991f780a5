/**
 * Oracle: a real, unmodified Hardhat project's test suite against the dev node. Hardhat 2 ships its sample
 * project in the npm package (node_modules/hardhat/sample-projects/javascript: the Lock contract and its
 * tests with loadFixture, time helpers, revertedWith, emit and changeEtherBalances, MIT licensed). The test
 * copies it as shipped to a temp dir, adds our hardhat.config.js (a `native` network), links the toolbox
 * that scripts/setup.sh installed from the npm registry (test/external/hardhat-sample), and runs
 * `npx hardhat test --network native` against a --dev node with automine.
 */
import test from 'ava';
import { execFile } from 'node:child_process';
import { cpSync, existsSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
const PREPARED = join(REPO, 'test/external/hardhat-sample');
const SAMPLE = join(REPO, 'node_modules/hardhat/sample-projects/javascript');

export interface HardhatRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Copy the sample project as shipped, with our config and the prepared dependencies. */
export function prepareSampleProject(dir: string): void {
  for (const entry of readdirSync(SAMPLE)) cpSync(join(SAMPLE, entry), join(dir, entry), { recursive: true });
  // What `hardhat init` adds around the sample: the project's package.json and its installed dependencies.
  cpSync(join(PREPARED, 'hardhat.config.js'), join(dir, 'hardhat.config.js'));
  cpSync(join(PREPARED, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(PREPARED, 'node_modules'), join(dir, 'node_modules'), 'dir');
}

/** `npx hardhat test --network <network>` in dir (asynchronous: the node under test may run in this process). */
export function hardhatTest(dir: string, network: string, env: NodeJS.ProcessEnv, timeoutMs: number): Promise<HardhatRun> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['--no', 'hardhat', 'test', '--network', network],
      {
        cwd: dir,
        timeout: timeoutMs,
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
        env: {
          ...process.env,
          ...env,
          HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
          HARDHAT_DISABLE_TELEMETRY: 'true',
          CI: 'true',
          NO_COLOR: '1',
          FORCE_COLOR: '0',
          npm_config_update_notifier: 'false',
        },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: performance.now() - t0 }),
    );
  });
}

test('Hardhat sample project (Lock): its unmodified test suite passes against --dev with automine', async (t) => {
  t.timeout(300_000);
  if (!existsSync(join(PREPARED, 'node_modules/@nomicfoundation/hardhat-toolbox'))) {
    t.fail('test/external/hardhat-sample is not installed: run scripts/setup.sh');
    return;
  }
  const n = await startTestNode({ blockTimeMs: 0, anvilCompat: true });
  t.teardown(() => n.stop());
  const tmp = tempDir('native-hardhat-sample-');
  t.teardown(tmp.cleanup);
  prepareSampleProject(tmp.dir);
  const run = await hardhatTest(tmp.dir, 'native', { NATIVE_RPC_URL: n.url }, 240_000);
  const out = `${run.stdout}\n${run.stderr}`;
  t.is(run.code, 0, out);
  // Every test of the suite ran and passed (mocha's summary), none skipped.
  t.regex(run.stdout, /\b9 passing\b/, out);
  t.notRegex(run.stdout, /failing|pending/, out);
  t.log(`hardhat test --network native: ${(run.ms / 1000).toFixed(1)} s`);
});
