/**
 * Hardhat 2's sample project (shipped in the hardhat npm package: node_modules/hardhat/sample-projects/javascript,
 * MIT) set up in a directory as `hardhat init` would leave it, with our hardhat.config.js (a `native` network) and
 * the toolbox scripts/setup.sh installed from the npm registry; used by the oracle test and bench/hardhat-oracle.ts.
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, readdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = fileURLToPath(new URL('../../../', import.meta.url));
/** The project's package.json, lock, config and (after setup) node_modules. */
export const PREPARED = join(REPO, 'test/external/hardhat-sample');
const SAMPLE = join(REPO, 'node_modules/hardhat/sample-projects/javascript');

export interface HardhatRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Whether scripts/setup.sh installed the project's dependencies. */
export const sampleProjectInstalled = (): boolean => existsSync(join(PREPARED, 'node_modules/@nomicfoundation/hardhat-toolbox'));

/** The hardhat CLI of the project's dependencies (for long-running commands such as `hardhat node`). */
export const HARDHAT_BIN = join(PREPARED, 'node_modules/hardhat/internal/cli/bootstrap.js');

/** Environment of every Hardhat run: no telemetry prompt, no colours. */
export const HARDHAT_ENV: NodeJS.ProcessEnv = {
  HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
  HARDHAT_DISABLE_TELEMETRY: 'true',
  CI: 'true',
  NO_COLOR: '1',
  FORCE_COLOR: '0',
  npm_config_update_notifier: 'false',
};

/** Copy the sample project as shipped into dir, with our config and the prepared dependencies. */
export function prepareSampleProject(dir: string): void {
  for (const entry of readdirSync(SAMPLE)) cpSync(join(SAMPLE, entry), join(dir, entry), { recursive: true });
  // What `hardhat init` adds around the sample: the project's package.json and its installed dependencies.
  cpSync(join(PREPARED, 'hardhat.config.js'), join(dir, 'hardhat.config.js'));
  cpSync(join(PREPARED, 'package.json'), join(dir, 'package.json'));
  symlinkSync(join(PREPARED, 'node_modules'), join(dir, 'node_modules'), 'dir');
}

/** `npx hardhat <args>` in dir (asynchronous: the node under test may run in this process). */
export function hardhat(dir: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<HardhatRun> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    execFile(
      'npx',
      ['--no', 'hardhat', ...args],
      {
        cwd: dir,
        timeout: timeoutMs,
        encoding: 'utf8',
        maxBuffer: 16 * 1024 * 1024,
        env: { ...process.env, ...env, ...HARDHAT_ENV },
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr, ms: performance.now() - t0 }),
    );
  });
}

/** The sample project set up in dir and compiled (the benches time the suite, not the compiler). */
export async function prepareCompiledSampleProject(dir: string): Promise<void> {
  prepareSampleProject(dir);
  const compile = await hardhat(dir, ['compile'], {}, 300_000);
  if (compile.code !== 0) throw new Error(`hardhat compile failed\n${compile.stdout}\n${compile.stderr}`);
}
