import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Proposal } from '../ts/chain/chain.js';
import { crypto } from '../ts/crypto/index.js';
import { keyPairFromPrivate, randomKeyPair } from '../ts/ledger/keys.js';
import type { SignedTransaction } from '../ts/ledger/transaction.js';
import { ethCall, ethLog, findLogs } from '../ts/services/index.js';
import { type LogFilter, locateReceipts, logMatches } from '../ts/events/index.js';
import { P, prefixEnd } from '../ts/storage/index.js';
import { fromHex, to0x } from '../ts/util/hex.js';
import { type DevChain, EvmSender, callData, deployData, devParams, openChain } from './evm-fixtures.js';
import { senderKeys } from './fixtures.js';
import type { Row } from './ledger.js';

const E18 = 10n ** 18n;
const WARM_ROUNDS = 3;
const RECIPIENT = `0x${'cd'.repeat(20)}`;

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const rate = (n: number, ms: number): string => `${Math.round(n / (ms / 1000)).toLocaleString()} tx/s`;

async function withChain<T>(funded: string[], windowSize: number, run: (dev: DevChain) => Promise<T>): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-evm-'));
  const validator = randomKeyPair();
  const dev = await openChain(dir, devParams(validator, funded), validator, windowSize);
  try {
    return await run(dev);
  } finally {
    await dev.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Propose + commit blocks until every transaction is in (block gas defers the rest); at least one block. */
async function includeAll(
  dev: DevChain,
  txs: readonly SignedTransaction[],
): Promise<{ proposals: Proposal[]; ms: number; commitMs: number }> {
  const proposals: Proposal[] = [];
  let pending = txs;
  let ms = 0;
  let commitMs = 0;
  do {
    const t0 = performance.now();
    const p = await dev.chain.propose(pending, dev.validator, dev.chain.head.timestamp + 1);
    const t1 = performance.now();
    await dev.chain.commit(p);
    const t2 = performance.now();
    if (p.result.dropped.length) throw new Error(`dropped: ${p.result.dropped[0].reason}`);
    ms += t1 - t0;
    commitMs += t2 - t1;
    proposals.push(p);
    pending = p.result.deferred;
  } while (pending.length);
  return { proposals, ms, commitMs };
}

type Included = Awaited<ReturnType<typeof includeAll>>;

/** Rows of a warm round (the cold first round in the notes). */
function executionRows(name: string, r: { n: number; cold: Included; warm: Included }): Row[] {
  const { n, cold, warm } = r;
  const gas = warm.proposals.reduce((s, p) => s + p.block.gas_used, 0n) / BigInt(n);
  return [
    {
      name: `${name} (execute + state root)`,
      value: rate(n, warm.ms),
      note: `${warm.proposals.length} block(s), ${gas.toLocaleString()} gas each, ${warm.ms.toFixed(0)} ms (best of ${WARM_ROUNDS}; cold first round ${cold.ms.toFixed(0)} ms)`,
    },
    {
      name: '... incl. atomic RocksDB commit',
      value: rate(n, warm.ms + warm.commitMs),
      note: `commit ${warm.commitMs.toFixed(0)} ms`,
    },
  ];
}

/** Value transfers (many senders) and ERC-20 transfers in block execution; eth_call of balanceOf. */
export async function benchEvmExecution(senders = 1400, tokenSenders = 600): Promise<Row[]> {
  const keys = senderKeys(senders);
  const deployer = new EvmSender(keyPairFromPrivate('ee'.repeat(32)));
  return withChain([...keys.map((k) => k.address), deployer.address], 1000, async (dev) => {
    const rows: Row[] = [];
    const accounts = keys.map((k) => new EvmSender(k));
    // Value transfers: one per sender per round, pre-signed. The first round warms the VM and the JIT;
    // the fastest of the next WARM_ROUNDS is reported (the machine is shared and noisy).
    const rounds = async (make: () => SignedTransaction[]) => {
      const cold = await includeAll(dev, make());
      let warm = cold;
      for (let i = 0; i < WARM_ROUNDS; i++) {
        const r = await includeAll(dev, make());
        if (i === 0 || r.ms < warm.ms) warm = r;
      }
      return { n: warm.proposals.reduce((s, p) => s + p.block.tx_count, 0), cold, warm };
    };
    const v = await rounds(() => accounts.map((a) => a.tx(RECIPIENT, undefined, { gas: 21_000n, value: 1n })));
    rows.push(
      ...executionRows(
        `EVM value transfers: ${v.n.toLocaleString()} signed EIP-1559 txs from ${senders.toLocaleString()} senders`,
        v,
      ),
    );

    // ERC-20: deploy, give each token sender a balance, then every sender transfers to the next one.
    const [deploy] = (
      await includeAll(dev, [deployer.tx(undefined, deployData('Token', ['Bench', 'BCH', 1_000_000_000n * E18]))])
    ).proposals;
    const token = to0x(deploy.result.receipts[0].contractAddress as Uint8Array);
    const holders = accounts.slice(0, tokenSenders);
    await includeAll(
      dev,
      holders.map((h) => deployer.tx(token, callData('Token', 'transfer', [h.address, 1000n * E18]))),
    );
    const next = (i: number) => holders[(i + 1) % holders.length].address;
    const e = await rounds(() => holders.map((h, i) => h.tx(token, callData('Token', 'transfer', [next(i), 1n]))));
    rows.push(...executionRows(`EVM ERC-20 transfers: ${e.n} token transfers from ${tokenSenders} senders`, e));

    // eth_call: balanceOf through the services layer (what the JSON-RPC handler calls), sequential.
    const data = callData('Token', 'balanceOf', [holders[0].address]);
    for (let i = 0; i < 50; i++) await ethCall(dev, { to: token, data });
    const calls = 1000;
    const t0 = performance.now();
    for (let i = 0; i < calls; i++) await ethCall(dev, { to: token, data });
    const ms = performance.now() - t0;
    rows.push({
      name: 'eth_call balanceOf (services ethCall, sequential)',
      value: `${Math.round(calls / (ms / 1000)).toLocaleString()} calls/s`,
      note: `${((ms * 1000) / calls).toFixed(0)} µs per call; a fresh VM over the head state per call`,
    });
    return rows;
  });
}

/** The previous eth_getLogs plan, for comparison: read every block of the range, one bloom scan, then receipts. */
async function previousPlan(dev: DevChain, f: LogFilter): Promise<number> {
  const groups = [f.addresses, ...f.topics.filter((s): s is Uint8Array[] => s !== null)].filter((g) => g.length);
  const heights: number[] = [];
  const blooms: Uint8Array[] = [];
  for (let h = f.fromBlock; h <= f.toBlock; h++) {
    const b = await dev.chain.blocks.getBlock(h);
    if (!b || b.logs_bloom === '00'.repeat(256)) continue;
    heights.push(h);
    blooms.push(fromHex(b.logs_bloom));
  }
  const cand = groups.length
    ? crypto()
        .bloomScan(blooms, groups)
        .map((i) => heights[i])
    : heights;
  let n = 0;
  for (const h of cand) {
    for (const r of locateReceipts(h, (await dev.chain.blocks.receipts(h)) ?? []))
      n += r.receipt.logs.filter((l) => logMatches(l, f)).length;
  }
  return n;
}

async function p50(runs: number, fn: () => Promise<unknown>): Promise<{ p50: number; min: number }> {
  for (let i = 0; i < 2; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    times.push(performance.now() - t0);
  }
  return { p50: median(times), min: Math.min(...times) };
}

/**
 * eth_getLogs over 10,000 blocks: a chain of `blocks` mostly empty blocks where every `every`-th block
 * holds `perBlock` token transfers of one of `contracts` tokens (rotating); queries by one contract's
 * address, by address + recipient topic, and without a filter.
 */
export async function benchGetLogs(
  log: (s: string) => void,
  blocks = 10_200,
  every = 40,
  perBlock = 4,
  contracts = 4,
): Promise<Row[]> {
  const deployer = new EvmSender(keyPairFromPrivate('ef'.repeat(32)));
  return withChain([deployer.address], 1000, async (dev) => {
    const t0 = performance.now();
    const deploys = Array.from({ length: contracts }, (_, i) =>
      deployer.tx(undefined, deployData('Token', [`T${i}`, `T${i}`, 10n ** 30n])),
    );
    const tokens = (await includeAll(dev, deploys)).proposals.flatMap((p) =>
      p.result.receipts.map((r) => to0x(r.contractAddress as Uint8Array)),
    );
    const recipients = Array.from({ length: 8 }, (_, i) => `0x${(i + 1).toString(16).padStart(2, '0').repeat(20)}`);
    let logs = 0;
    for (let h = dev.chain.height + 1; h <= blocks; h++) {
      const txs: SignedTransaction[] = [];
      if (h % every === 0) {
        const token = tokens[(h / every) % contracts];
        for (let i = 0; i < perBlock; i++)
          txs.push(deployer.tx(token, callData('Token', 'transfer', [recipients[(h + i) % recipients.length], 1n])));
        logs += perBlock;
      }
      const r = await includeAll(dev, txs);
      if (r.proposals.length !== 1) throw new Error('transfers did not fit one block');
      if (h % 2000 === 0) log(`  getLogs chain: ${h} blocks`);
    }
    const buildS = (performance.now() - t0) / 1000;
    const head = dev.chain.height;
    const range = { fromBlock: head - 9_999, toBlock: head };
    const byAddress: LogFilter = { ...range, addresses: [fromHex(tokens[0])], topics: [] };
    const toTopic = Buffer.concat([Buffer.alloc(12), fromHex(recipients[3])]);
    const byTopic: LogFilter = { ...range, addresses: [fromHex(tokens[1])], topics: [null, null, [toTopic]] };
    const all: LogFilter = { ...range, addresses: [], topics: [] };
    const query = async (f: LogFilter) => (await findLogs(dev, f)).map((l) => ethLog(l.log, l.at));
    const [nAddr, nTopic, nAll] = [(await query(byAddress)).length, (await query(byTopic)).length, (await query(all)).length];
    const entries = (await dev.db.range({ gte: Buffer.from([P.logIndex]), lt: prefixEnd(Buffer.from([P.logIndex])) })).length;
    const a = await p50(20, () => query(byAddress));
    const tt = await p50(20, () => query(byTopic));
    const n = await p50(20, () => query(all));
    if ((await previousPlan(dev, byAddress)) !== nAddr) throw new Error('previous plan disagrees');
    const prev = await p50(3, () => previousPlan(dev, byAddress));
    const chain = `${head.toLocaleString()} blocks, ${logs} Transfer logs in ${Math.round(logs / perBlock)} blocks, ${contracts} tokens; window 1000`;
    const ms = (x: { p50: number; min: number }) => `${x.p50.toFixed(2)} ms p50 (min ${x.min.toFixed(2)})`;
    return [
      {
        name: `eth_getLogs over 10,000 blocks, one contract's address (${nAddr} logs)`,
        value: ms(a),
        note: `${chain}; built in ${buildS.toFixed(0)} s`,
      },
      {
        name: `eth_getLogs over 10,000 blocks, address + recipient topic (${nTopic} logs)`,
        value: ms(tt),
        note: `index entries on disk: ${entries}`,
      },
      {
        name: `eth_getLogs over 10,000 blocks, no filter, sparse chain (${nAll} logs)`,
        value: ms(n),
        note: 'postings of blocks with logs + window flags',
      },
      { name: 'eth_getLogs, one address: previous plan (reads every block)', value: ms(prev), note: 'p50 of 3; for comparison' },
    ];
  });
}
