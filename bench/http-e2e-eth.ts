import { rmSync } from 'node:fs';
import { type TypedTxData, createTx } from '@ethereumjs/tx';
import { chainCommon } from '../ts/execution/index.js';
import type { KeyPair } from '../ts/ledger/keys.js';
import { to0x } from '../ts/util/hex.js';
import { senderKeys } from './fixtures.js';
import { type SubmissionStats, rawLane, startBenchChainNode } from './http-e2e.js';
import { type Server, startGanache, stopServer } from './http-load-procs.js';
import { groupCpuSeconds } from './proc-cpu.js';

/**
 * Submit -> inclusion with Ethereum transactions over JSON-RPC (`eth_sendRawTransaction`): the same signed
 * EIP-1559 transfers, on the same lanes, to our node and to ganache (automine), so the two are compared on
 * one load. Both chains use id 7120 (the bench chain's; ganache is started with it) and fund the same
 * deterministic sender keys (bench/fixtures.ts).
 */

/** The bench chain's id, given to ganache too so one set of signatures serves both. */
const CHAIN_ID = 7120;
const GWEI = 1_000_000_000n;
/** Each sender's balance on ganache: 1000 coins, as the bench genesis gives (1 coin = 10^18 wei). */
const GANACHE_BALANCE_WEI = (1000n * 10n ** 18n).toString();
const TO = `0x${'ab'.repeat(20)}` as const;

const signedCache = new Map<string, string[][]>();

/** JSON-RPC bodies per lane (one sender each): `perSender` transfers, nonces in order, signed once per size. */
export function ethTransferBodies(keys: KeyPair[], perSender: number): string[][] {
  const key = `${keys.length}x${perSender}`;
  const cached = signedCache.get(key);
  if (cached) return cached;
  const common = chainCommon(CHAIN_ID, 'prague');
  const lanes = keys.map((k) =>
    Array.from({ length: perSender }, (_, nonce) => {
      const data: TypedTxData = {
        type: 2,
        nonce: BigInt(nonce),
        gasLimit: 21_000n,
        maxFeePerGas: 10n * GWEI,
        maxPriorityFeePerGas: GWEI,
        to: TO,
        value: 1000n,
      };
      const raw = to0x(createTx(data, { common }).sign(k.privateKey).serialize());
      return JSON.stringify({ jsonrpc: '2.0', id: nonce + 1, method: 'eth_sendRawTransaction', params: [raw] });
    }),
  );
  signedCache.set(key, lanes);
  return lanes;
}

async function rpcBatch(s: Server, calls: { method: string; params: unknown[] }[]): Promise<any[]> {
  const body = JSON.stringify(calls.map((c, i) => ({ jsonrpc: '2.0', id: i + 1, ...c })));
  const r = await fetch(`http://127.0.0.1:${s.port}${s.rpcPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    signal: AbortSignal.timeout(10_000),
  });
  return (await r.json()) as any[];
}

/** Waits until every sender's latest nonce reaches `perSender` (all its transfers are in blocks). */
async function waitIncluded(s: Server, keys: KeyPair[], perSender: number, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  const calls = keys.map((k) => ({ method: 'eth_getTransactionCount', params: [k.address, 'latest'] }));
  for (;;) {
    const answers = await rpcBatch(s, calls);
    if (answers.every((a) => typeof a?.result === 'string' && Number(a.result) >= perSender)) return;
    if (Date.now() > until) throw new Error(`${s.name}: transfers not all included within ${deadlineMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

export type EthSubmissionTarget = 'native' | 'ganache';

export interface EthSubmissionResult extends SubmissionStats {
  accepted: number;
  /** Our node: the blocks that hold transactions, in order (EVM gas used, transactions). */
  blocks?: { gasUsed: number; txs: number }[];
}

/** Every non-empty block of a chain, from 1 to its head. */
async function filledBlocks(s: Server): Promise<{ gasUsed: number; txs: number }[]> {
  const [head] = await rpcBatch(s, [{ method: 'eth_blockNumber', params: [] }]);
  const heights = Array.from({ length: Number(head.result) }, (_, i) => `0x${(i + 1).toString(16)}`);
  const answers = await rpcBatch(
    s,
    heights.map((h) => ({ method: 'eth_getBlockByNumber', params: [h, false] })),
  );
  return answers
    .map((a) => ({ gasUsed: Number(a.result.gasUsed), txs: a.result.transactions.length as number }))
    .filter((b) => b.txs > 0);
}

/**
 * One run: a fresh server (our node on the bench genesis, or ganache with the senders funded), `lanes` raw
 * keep-alive lanes each sending one sender's transfers in nonce order, timed until every transfer is in a block.
 * The server's CPU (its whole process group) is read around the run.
 */
export async function benchEthSubmission(
  target: EthSubmissionTarget,
  lanes = 64,
  perSender = 160,
  opts: { main?: string } = {},
): Promise<EthSubmissionResult> {
  const keys = senderKeys(lanes);
  const bodies = ethTransferBodies(keys, perSender);
  let dir: string | undefined;
  let server: Server;
  if (target === 'native') {
    ({ server, dir } = await startBenchChainNode('uws', keys, [], opts.main));
  } else {
    const funded = keys.flatMap((k) => ['--wallet.accounts', `${to0x(k.privateKey)},${GANACHE_BALANCE_WEI}`]);
    server = await startGanache(['--chain.chainId', String(CHAIN_ID), ...funded]);
  }
  try {
    const pgid = server.child.pid as number;
    const cpu0 = groupCpuSeconds(pgid);
    const t0 = performance.now();
    const rs = await Promise.all(bodies.map((list) => rawLane(server.port, list, server.rpcPath)));
    const t1 = performance.now();
    const refused = rs.find((r) => r.failed.length)?.failed[0];
    // A refused transfer leaves its sender's later nonces pending for ever: the run measures nothing.
    if (refused !== undefined) throw new Error(`${server.name} refused a transfer: ${refused}`);
    await waitIncluded(server, keys, perSender, 120_000);
    const t2 = performance.now();
    const cpu1 = groupCpuSeconds(pgid);
    const accepted = rs.reduce((n, r) => n + r.ok, 0);
    return {
      accepted,
      ...(target === 'native' ? { blocks: await filledBlocks(server) } : {}),
      acceptedPerSec: accepted / ((t1 - t0) / 1000),
      includedPerSec: accepted / ((t2 - t0) / 1000),
      nodeCpuUs: ((cpu1 - cpu0) * 1e6) / (lanes * perSender),
    };
  } finally {
    await stopServer(server.child);
    if (dir) rmSync(dir, { recursive: true, force: true });
  }
}
