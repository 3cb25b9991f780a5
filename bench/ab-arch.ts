/**
 * Issue 24's "done when" measurement: block production, HTTP reads and the devnet rows of this build
 * side by side with the build before the redesign (74e466c), both measured in one run, interleaved.
 * `scripts/bench-ab-arch.sh` builds the baseline and runs this; by hand:
 *   scripts/bench-baseline.sh 74e466c .tmp/baseline-74e466c && npx tsc -p tsconfig.json &&
 *   BENCH_BASELINE=.tmp/baseline-74e466c node dist/bench/ab-arch.js [--write]
 *
 * Each build is measured with its own bench code (its dist/bench/ledger.js and dist/bench/network.js, run
 * in a child process), so an API the redesign renamed cannot break the baseline's side; the HTTP reads
 * run bench/http-load.ts, which starts both builds' nodes and measures them in the same rounds.
 *
 * Env: BENCH_BASELINE (required: the baseline build's directory), BENCH_AB_PARTS (block,http,net),
 * BENCH_AB_BLOCK_ROUNDS (5 processes per build, alternating), BENCH_AB_NET_PARTS (live,sync),
 * BENCH_AB_NET_ROUNDS (1), BENCH_AB_OUT (.tmp/bench-ab-arch.md); passed on: BENCH_HTTP_ROUNDS (3),
 * BENCH_HTTP_SECS (5), BENCH_SYNC_BLOCKS and BENCH_SYNC_TX_BLOCKS (network.js's own defaults).
 * `--write` replaces the section AB_SECTION of bench/RESULTS.md with the result.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BlockRuns, type NetRuns, blockTable, httpPart, netTable } from './ab-arch-render.js';
import { benchHttpLoad } from './http-load.js';
import { writeResultsSection } from './results-file.js';

export const AB_SECTION = '## Redesign A/B: before and after issue 24';

/** One build under test: where its dist/ lives and what to call it in the tables. */
export interface Build {
  label: 'before' | 'after';
  dir: string;
  commit: string;
}

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const t0 = Date.now();
/** Progress on stderr, each line with the minutes since the start (the run must fit in ~15 min). */
const log = (s: string) => process.stderr.write(`[${((Date.now() - t0) / 60_000).toFixed(1)} min] ${s}\n`);
const envInt = (name: string, dflt: number) => {
  const v = Number(process.env[name]);
  return Number.isInteger(v) && v > 0 ? v : dflt;
};
const listEnv = (name: string, dflt: string) => (process.env[name] ?? dflt).split(',').map((s) => s.trim());
const load1 = () => loadavg()[0].toFixed(1);

/** A child node process running `args`; its stdout, or an Error carrying the tail of its stderr. */
function runChild(args: string[], cwd: string, timeoutMs: number, echo: (s: string) => void): Promise<string> {
  return new Promise((done, fail) => {
    const child = spawn(process.execPath, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      for (const line of d.toString().split('\n')) if (line) echo(line);
    });
    child.stderr.on('data', (d: Buffer) => {
      err = (err + d).slice(-4000);
    });
    // A hung child (a devnet that never reaches its height) must not hold the whole run.
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) done(out);
      else fail(new Error(`exit ${code ?? signal}: ${err.trim().split('\n').slice(-3).join(' ')}`));
    });
  });
}

/** One block-production measurement of `build` (a fresh process: its own bench/ledger.ts). */
async function blockRun(build: Build): Promise<{ name: string; value: string; note?: string }[]> {
  const ledger = resolve(build.dir, 'dist/bench/ledger.js');
  const script = `const m = await import(${JSON.stringify(ledger)}); process.stdout.write(JSON.stringify(await m.benchBlockExecution()));`;
  return JSON.parse(await runChild(['--input-type=module', '-e', script], build.dir, 120_000, () => undefined));
}

/** Rounds of block production, the two builds alternating (before, after, after, before, ...). */
async function blockPart(builds: [Build, Build], rounds: number): Promise<BlockRuns> {
  const runs: BlockRuns = new Map();
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 === 0 ? builds : ([builds[1], builds[0]] as const);
    for (const b of order) {
      try {
        const rows = await blockRun(b);
        rows.forEach((row, i) => {
          const key = `${i}`;
          const entry = runs.get(key) ?? { name: row.name, before: [], after: [] };
          if (b.label === 'after') entry.name = row.name;
          entry[b.label].push(Number(row.value.replace(/[^0-9.]/g, '')));
          runs.set(key, entry);
        });
        log(`  block production, ${b.label}, round ${r + 1}: ${rows.map((x) => x.value).join(' / ')}`);
      } catch (e) {
        log(`  block production, ${b.label}, round ${r + 1}: failed: ${(e as Error).message}`);
      }
    }
  }
  return runs;
}

/** The markdown table rows network.js prints (first cell = the measurement). */
export function tableRows(out: string): Map<string, { result: string; notes: string }> {
  const rows = new Map<string, { result: string; notes: string }>();
  for (const line of out.split('\n')) {
    if (!line.startsWith('| ') || line.startsWith('| Measurement') || line.startsWith('| ---')) continue;
    const [name, result, ...notes] = line.slice(2, -2).split(' | ');
    rows.set(name.trim(), { result: result?.trim() ?? '', notes: notes.join(' | ').trim() });
  }
  return rows;
}

/** The devnet rows (bench/network.ts `live` and `sync`) of each build, one build after the other. */
async function netPart(builds: [Build, Build], parts: string[], rounds: number): Promise<NetRuns> {
  const runs: NetRuns = { rows: new Map(), failures: [] };
  for (let r = 0; r < rounds; r++) {
    for (const part of parts) {
      const order = r % 2 === 0 ? builds : ([builds[1], builds[0]] as const);
      for (const b of order) {
        log(`devnet ${part}, ${b.label}, round ${r + 1} (load ${load1()}) ...`);
        try {
          const out = await runChild([resolve(b.dir, 'dist/bench/network.js'), part], b.dir, 600_000, (s) =>
            log(`  [${b.label}] ${s}`),
          );
          for (const [name, row] of tableRows(out)) {
            const entry = runs.rows.get(name) ?? { before: [], after: [] };
            entry[b.label].push(row);
            runs.rows.set(name, entry);
          }
        } catch (e) {
          runs.failures.push(`${part}, ${b.label}, round ${r + 1}: ${(e as Error).message}`);
          log(`  failed: ${(e as Error).message}`);
        }
      }
    }
  }
  return runs;
}

function gitCommit(): string {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO, encoding: 'utf8' }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO, encoding: 'utf8' });
    return dirty.trim() ? `${head} + uncommitted changes` : head;
  } catch {
    return 'this checkout';
  }
}

async function main(): Promise<void> {
  const baseDir = process.env.BENCH_BASELINE;
  if (!baseDir) throw new Error('BENCH_BASELINE=<dir> is required (scripts/bench-ab-arch.sh sets it)');
  const before: Build = {
    label: 'before',
    dir: resolve(baseDir),
    commit: readFileSync(resolve(baseDir, 'BASELINE_COMMIT'), 'utf8').trim(),
  };
  const after: Build = { label: 'after', dir: REPO, commit: gitCommit() };
  const builds: [Build, Build] = [before, after];
  const parts = listEnv('BENCH_AB_PARTS', 'block,http,net');
  const started = new Date();
  // What the caller set (before this run fills in the HTTP defaults), for the command line.
  const envSet = Object.keys(process.env)
    .filter((k) => k.startsWith('BENCH_') && k !== 'BENCH_BASELINE')
    .sort()
    .map((k) => `${k}=${process.env[k]} `)
    .join('');
  const loads = [load1()];
  const sections: string[] = [];

  // A part that fails (wrk missing, a devnet that never started) is reported in its place; the others run.
  const part = async (name: string, run: () => Promise<string[]>) => {
    try {
      sections.push(...(await run()));
    } catch (e) {
      log(`${name} failed: ${(e as Error).stack}`);
      sections.push(`### ${name}`, '', `Failed: ${(e as Error).message}`, '');
    }
    loads.push(load1());
  };
  if (parts.includes('block')) {
    const rounds = envInt('BENCH_AB_BLOCK_ROUNDS', 5);
    log(`block production: ${rounds} rounds per build ...`);
    await part('Block production', async () => blockTable(await blockPart(builds, rounds), rounds, before, after));
  }
  if (parts.includes('http')) {
    process.env.BENCH_HTTP_TARGETS ??= 'uws';
    process.env.BENCH_HTTP_WORKLOADS ??= 'blockNumber,getBalance,rest,batch';
    process.env.BENCH_HTTP_ROUNDS ??= '3';
    log(`HTTP reads: ${process.env.BENCH_HTTP_ROUNDS} interleaved rounds ...`);
    await part('HTTP reads', async () => httpPart((await benchHttpLoad(log)).md, before, after));
  }
  if (parts.includes('net')) {
    const netParts = listEnv('BENCH_AB_NET_PARTS', 'live,sync');
    const rounds = envInt('BENCH_AB_NET_ROUNDS', 1);
    await part('Devnet rows', async () => netTable(await netPart(builds, netParts, rounds), rounds, before, after));
  }

  const cpu = cpus();
  const minutes = ((Date.now() - started.getTime()) / 60_000).toFixed(1);
  const md = [
    AB_SECTION,
    '',
    `- Date: ${started.toISOString()} (start), ${minutes} min; machine: ${cpu.length} x ${cpu[0]?.model ?? 'cpu'}, ` +
      `${Math.round(totalmem() / 2 ** 30)} GiB RAM, Node.js ${process.version}; 1-min load average at the start and after each part: ${loads.join(', ')}.`,
    `- Command: \`${envSet}scripts/bench-ab-arch.sh\` (builds the baseline with \`scripts/bench-baseline.sh ` +
      `${before.commit} .tmp/baseline-${before.commit}\`, then \`BENCH_BASELINE=.tmp/baseline-${before.commit} node dist/bench/ab-arch.js\`; bench/ab-arch.ts).`,
    `- before: ${before.commit} (main before the redesign); after: ${after.commit}. Same node_modules and native addon; each build runs its own bench code.`,
    '- Shared, noisy machine: treat differences under ~15% as noise.',
    '',
    ...sections,
  ];
  const out = resolve(REPO, process.env.BENCH_AB_OUT ?? '.tmp/bench-ab-arch.md');
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${md.join('\n')}\n`);
  process.stdout.write(`${md.join('\n')}\n`);
  log(`written to ${out}`);
  if (process.argv.includes('--write')) {
    writeResultsSection(AB_SECTION, [...md, '']);
    log('section replaced in bench/RESULTS.md');
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    () => process.exit(0),
    (err) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exit(1);
    },
  );
}
