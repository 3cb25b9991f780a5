import test from 'ava';
import { rpcOk } from '../helpers/evm.js';
import { startTestNode } from '../helpers/node.js';
import { type ScenarioTx, hardhatTraces, scenario, submitScenario } from '../helpers/trace.js';

/**
 * Oracle: struct logs of the same signed transactions, traced by the node and by hardhat@2 (EDR, prague).
 * Hardhat's intended differences (docs/evm.md, Tracing): it writes stack items as 64-hex words (geth
 * today: 0x quantities) and returnValue with 0x (geth: bare hex), carries the storage map on every step (geth: on SLOAD/SSTORE only) and omits
 * `refund` and the failing step's `error`; everything else is compared as is.
 */
function normalizeHardhat(log: Record<string, any>): Record<string, any> {
  const out = { ...log };
  if (out.stack) out.stack = (out.stack as string[]).map((s) => `0x${BigInt(`0x${s}`).toString(16)}`);
  if (out.op !== 'SLOAD' && out.op !== 'SSTORE') delete out.storage;
  return touchedSlot(out);
}

function normalizeOurs(log: Record<string, any>): Record<string, any> {
  const { refund: _refund, error: _error, ...rest } = log;
  return touchedSlot(rest);
}

/**
 * At SLOAD/SSTORE both show the touched slot; the rest of the map differs by design: geth (and the node)
 * keeps one map per contract, hardhat one per transaction (slots of other contracts leak into it).
 */
function touchedSlot(log: Record<string, any>): Record<string, any> {
  if (!log.storage || !log.stack) return log;
  const key = BigInt(log.stack.at(-1)).toString(16).padStart(64, '0');
  return { ...log, storage: { [key]: log.storage[key] } };
}

const OPTION_SETS: Record<string, Record<string, boolean>> = {
  default: {},
  disableStack: { disableStack: true },
  disableMemory: { disableMemory: true },
  disableStorage: { disableStorage: true },
};

test('debug_traceTransaction struct logs equal hardhat@2 on the same signed transactions', async (t) => {
  const n = await startTestNode();
  t.teardown(() => n.stop());
  const txs: ScenarioTx[] = await scenario(n.url);
  await submitScenario(n.url, txs);
  const requests = txs.flatMap((tx) =>
    Object.entries(OPTION_SETS).map(([set, options]) => ({ tx, set, hash: tx.hash, options })),
  );
  const ours: any[] = [];
  for (const r of requests) ours.push(await rpcOk(n.url, 'debug_traceTransaction', [r.hash, r.options]));
  const hh = await hardhatTraces(
    txs,
    requests.map(({ hash, options }) => ({ hash, options })),
  );
  t.deepEqual(
    hh.receipts.map((r) => r.status),
    ['0x1', '0x1', '0x1', '0x1', '0x1', '0x0', '0x0', '0x1'],
  );
  requests.forEach((r, i) => {
    const what = `${r.tx.name} (${r.set})`;
    const theirs = hh.traces[i].result;
    t.truthy(theirs, `${what}: hardhat answered ${hh.traces[i].error}`);
    const mine = ours[i];
    t.is(mine.gas, theirs.gas, what);
    t.is(mine.failed, theirs.failed, what);
    t.is(mine.returnValue, mine.failed && theirs.returnValue === '' ? '' : theirs.returnValue.replace(/^0x/, ''), what);
    t.is(mine.structLogs.length, theirs.structLogs.length, what);
    for (let j = 0; j < mine.structLogs.length; j++) {
      const a = normalizeOurs(mine.structLogs[j]);
      const b = normalizeHardhat(theirs.structLogs[j]);
      // A failing SSTORE: geth (and the node) records the value it tried to write, hardhat does not.
      if (mine.structLogs[j].error) {
        delete a.storage;
        delete b.storage;
      }
      // Without a stack the touched slot is unknown: our per-contract map must be part of hardhat's.
      if (a.storage && b.storage && !a.stack)
        b.storage = Object.fromEntries(Object.keys(a.storage).map((k) => [k, b.storage[k]]));
      if (JSON.stringify(Object.entries(a).sort()) !== JSON.stringify(Object.entries(b).sort())) {
        t.deepEqual(a, b, `${what}: step ${j}`);
        break;
      }
    }
  });
  // The node's own additions are there: geth's refund counter and the out-of-gas step's error.
  const oog = ours[requests.findIndex((r) => r.tx.name === 'outOfGas' && r.set === 'default')];
  t.is(oog.structLogs.at(-1).error, 'out of gas');
  const refund = ours[requests.findIndex((r) => r.tx.name === 'refund' && r.set === 'default')];
  t.true(refund.structLogs.some((l: any) => l.refund > 0));
});
