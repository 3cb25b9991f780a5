import { benchEthSubmission } from './http-e2e-eth.js';
import { type SubmissionStats, benchHttpSubmission } from './http-e2e.js';
import { GANACHE_VERSION } from './http-load-procs.js';
import { fmtInt, median } from './http-load-render.js';

/**
 * HTTP submit -> inclusion as part of the HTTP load bench's rounds (bench/http-load.ts, workload `submit`), so
 * the goal row (>= 5k tx/s on uws, native transfers on POST /transactions), its before/after and ganache's own
 * submit -> inclusion come from one run. Each measurement starts a fresh server: our node on the bench genesis
 * (journal on, the default), the baseline build's when BENCH_BASELINE is set, and ganache (automine) with the
 * same senders funded, fed the same signed EIP-1559 transfers on eth_sendRawTransaction as our node.
 */

export interface SubmitPlan {
  /** The baseline build's node (BENCH_BASELINE), for the before row. */
  before?: string;
  /** Ganache is a target (and installed): the eth_sendRawTransaction rows run. */
  ganache: boolean;
  lanes: number;
  /** Transfers per sender on our node (the 1 s block slot bounds the tail: large runs amortize it). */
  perSender: number;
  /**
   * EIP-1559 transfers per sender on eth_sendRawTransaction, to ganache and to our node alike (fewer: ganache mines
   * one block per transaction, and our node packs 5M gas of EVM transactions per block, 238 transfers).
   */
  ethPerSender: number;
}

interface Series {
  label: string;
  what: string;
  runs: SubmissionStats[];
  errors: string[];
}

export type SubmitRuns = Map<string, Series>;

const GOAL_TX_PER_SEC = 5000;
const NATIVE = 'native [uws]';
const NATIVE_ETH = 'native [uws], eth_sendRawTransaction';
const GANACHE_ETH = `ganache ${GANACHE_VERSION}, eth_sendRawTransaction`;

async function measure(
  runs: SubmitRuns,
  label: string,
  what: string,
  log: (s: string) => void,
  run: () => Promise<SubmissionStats>,
): Promise<void> {
  let s = runs.get(label);
  if (!s) runs.set(label, (s = { label, what, runs: [], errors: [] }));
  try {
    const r = await run();
    s.runs.push(r);
    log(
      `  submit on ${label}: ${fmtInt(r.acceptedPerSec)} tx/s accepted, ${fmtInt(r.includedPerSec)} tx/s included` +
        (r.nodeCpuUs !== undefined ? `, ${fmtInt(r.nodeCpuUs)} µs server CPU per tx` : ''),
    );
  } catch (err) {
    s.errors.push((err as Error).message.slice(0, 200));
    log(`  submit on ${label} failed: ${(err as Error).message}`);
  }
}

/**
 * One round: before (when a baseline is given) and after on POST /transactions, then, with ganache among the
 * targets, ours and ganache on eth_sendRawTransaction.
 */
export async function submitRound(runs: SubmitRuns, plan: SubmitPlan, round: number, log: (s: string) => void): Promise<void> {
  const { lanes, perSender } = plan;
  const n = fmtInt(lanes * perSender);
  const nativeWhat = `${n} native transfers, POST /transactions`;
  const nativeRun = (main?: string, label?: string) => async (): Promise<SubmissionStats> => {
    let got: SubmissionStats | undefined;
    await benchHttpSubmission('uws', lanes, perSender, 'raw keep-alive lanes', { main, label, onStats: (r) => (got = r) });
    if (!got) throw new Error('the run gave no statistics');
    return got;
  };
  const before = async () => {
    if (plan.before) await measure(runs, `${NATIVE} before`, nativeWhat, log, nativeRun(plan.before, 'before'));
  };
  const after = () => measure(runs, NATIVE, nativeWhat, log, nativeRun());
  // Before and after take turns going first: a run leaves work behind on the shared disk (its data dir removed,
  // the journal's syncs), which would otherwise always fall on the same one.
  if (round % 2 === 1) {
    await before();
    await after();
  } else {
    await after();
    await before();
  }
  if (!plan.ganache) return;
  const eth = `${fmtInt(lanes * plan.ethPerSender)} EIP-1559 transfers`;
  await measure(runs, NATIVE_ETH, eth, log, () => benchEthSubmission('native', lanes, plan.ethPerSender));
  await measure(runs, GANACHE_ETH, `${eth}, automine`, log, () => benchEthSubmission('ganache', lanes, plan.ethPerSender));
}

const rate = (runs: SubmissionStats[], k: 'acceptedPerSec' | 'includedPerSec'): string =>
  `${fmtInt(median(runs.map((r) => r[k])))} tx/s${runs.length > 1 ? ` (runs: ${runs.map((r) => fmtInt(r[k])).join(' / ')})` : ''}`;

export function renderSubmission(runs: SubmitRuns, plan: SubmitPlan): string[] {
  if (!runs.size) return [];
  const rows = [...runs.values()].map((s) => {
    if (!s.runs.length) return `| ${s.label} | ${s.what} | failed: ${s.errors[0] ?? '?'} | | |`;
    const cpu = s.runs.every((r) => r.nodeCpuUs !== undefined)
      ? `${fmtInt(median(s.runs.map((r) => r.nodeCpuUs as number)))} µs`
      : 'n/a';
    const failed = s.errors.length ? ` (${s.errors.length} run(s) failed: ${s.errors[0]})` : '';
    return `| ${s.label} | ${s.what} | ${rate(s.runs, 'includedPerSec')}${failed} | ${rate(s.runs, 'acceptedPerSec')} | ${cpu} |`;
  });
  const med = (label: string) => {
    const r = runs.get(label)?.runs ?? [];
    return r.length ? median(r.map((x) => x.includedPerSec)) : undefined;
  };
  const accepted = (label: string) => median((runs.get(label)?.runs ?? []).map((x) => x.acceptedPerSec));
  const after = med(NATIVE);
  const ours = med(NATIVE_ETH);
  const ganache = med(GANACHE_ETH);
  const goal =
    after === undefined
      ? 'n/a'
      : `${fmtInt(after)} tx/s (median) -> ${after >= GOAL_TX_PER_SEC ? 'met' : 'MISSED'}` +
        (med(`${NATIVE} before`) !== undefined ? `; before ${fmtInt(med(`${NATIVE} before`) as number)} tx/s` : '');
  return [
    `${plan.lanes} senders, one raw keep-alive lane each (one request in flight, nonces in order), from this process; ` +
      'each measurement starts a fresh server and runs until every transfer is in a block (our node: 1 s blocks, ' +
      'so the last block bounds the tail; ganache: automine, one block per transaction, answered once mined). ' +
      "Server CPU: the server's process group from /proc, per transfer. Median of the rounds.",
    '',
    '| Server | Load | Submit -> inclusion | Accepted | Server CPU per tx |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `- Goal: HTTP submit -> inclusion >= ${fmtInt(GOAL_TX_PER_SEC)} tx/s [uws], native transfers: ${goal}`,
    ...(ours !== undefined && ganache !== undefined
      ? [
          `- Same EIP-1559 transfers on eth_sendRawTransaction: our node ${(ours / ganache).toFixed(2)}x ganache's submit -> ` +
            `inclusion, ${(accepted(NATIVE_ETH) / accepted(GANACHE_ETH)).toFixed(2)}x its acceptance rate. Our node packs ` +
            'EVM transactions into 1 s blocks up to `--block-pack-gas` (5M) and beyond it while the block fits ' +
            '`--block-pack-ms` (400 ms of execution; docs/evm.md, "Block time"), which bounds its inclusion rate here; ' +
            'ganache mines a block per transaction before answering.',
        ]
      : []),
    '- Our node runs with the transaction journal on (the default: every accepted transaction is durable before ' +
      'its answer); ganache keeps its chain in memory.',
    '',
  ];
}
