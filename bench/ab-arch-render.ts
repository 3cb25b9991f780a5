/** Markdown of bench/ab-arch.ts: the before and after columns of each part. */

/** The builds as the tables name them (bench/ab-arch.ts Build). */
interface Named {
  commit: string;
}

/** Block production: per row (by position in bench/ledger.ts), the tx/s of each run of each build. */
export type BlockRuns = Map<string, { name: string; before: number[]; after: number[] }>;

/** Devnet rows by their first cell: the result and notes cells of each run of each build. */
export interface NetRuns {
  rows: Map<string, { before: { result: string; notes: string }[]; after: { result: string; notes: string }[] }>;
  failures: string[];
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

const cell = (xs: number[]) =>
  xs.length ? `${int(median(xs))} tx/s (runs: ${xs.map(int).join(' / ')})` : 'failed (see the run log)';

export function blockTable(runs: BlockRuns, rounds: number, before: Named, after: Named): string[] {
  return [
    '### Block production (bench/ledger.ts `benchBlockExecution`)',
    '',
    `10,000 native transfers from 2,000 senders in one block, a fresh process per measurement with each build's own`,
    `bench code; ${rounds} processes per build, the builds alternating (before, after, after, before, ...); median (runs in order).`,
    '',
    `| Measurement | before (${before.commit}) | after (${after.commit}) | after / before |`,
    '| --- | --- | --- | --- |',
    ...[...runs.values()].map((r) => {
      const ratio = r.before.length && r.after.length ? `${(median(r.after) / median(r.before)).toFixed(2)}x` : 'n/a';
      return `| ${r.name} | ${cell(r.before)} | ${cell(r.after)} | ${ratio} |`;
    }),
    '',
  ];
}

/**
 * The HTTP reads: bench/http-load.ts's tables as they are ("native [uws]" is after, "native [uws] before" the
 * baseline), without its caveats (those of "HTTP load vs peers" above apply).
 */
export function httpPart(md: string[], before: Named, after: Named): string[] {
  const cut = md.indexOf('Caveats:');
  const env = ['BENCH_HTTP_TARGETS', 'BENCH_HTTP_WORKLOADS'].map((k) => `${k}=${process.env[k] ?? ''}`).join(' ');
  return [
    `### HTTP reads (bench/http-load.ts, \`${env}\`)`,
    '',
    `"native [uws]" is after (${after.commit}), "native [uws] before" is ${before.commit}; both nodes run at once and each`,
    'workload is measured on one, then the other, in every round. Caveats: those of "HTTP load vs peers".',
    '',
    ...(cut < 0 ? md : md.slice(0, cut)),
  ];
}

export function netTable(runs: NetRuns, rounds: number, before: Named, after: Named): string[] {
  const join = (xs: { result: string }[]) => (xs.length ? xs.map((x) => x.result).join('; ') : 'n/a');
  return [
    '### Devnet rows (bench/network.ts `live` and `sync`, each build its own)',
    '',
    `The rows of "Network: a 4-validator devnet on this machine", run by each build's own bench/network.ts (its own nodes,`,
    `test helpers and prebuilt chains); ${rounds} run(s) per build, the builds one after the other for each part. The notes`,
    "cells (loads, phases) of each run are in the run's log (.tmp/bench-ab-arch.log).",
    '',
    `| Measurement | before (${before.commit}) | after (${after.commit}) |`,
    '| --- | --- | --- |',
    ...[...runs.rows].map(([name, r]) => `| ${name} | ${join(r.before)} | ${join(r.after)} |`),
    '',
    ...runs.failures.map((f) => `- Failed: ${f}`),
    ...(runs.failures.length ? [''] : []),
  ];
}
