import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
const F = await import('./dist/bench/evm-fixtures.js');
const { DEFAULT_TRACE_OPTIONS, TracePool } = await import('./dist/ts/execution/index.js');
const { DEV_MNEMONIC, keyPairFromMnemonic, randomKeyPair } = await import('./dist/ts/ledger/keys.js');
const { traceTransaction } = await import('./dist/ts/services/index.js');
const { stringifyExact } = await import('./dist/ts/util/json.js');
const { getCreateAddress } = await import('ethers');
const sender = new F.EvmSender(keyPairFromMnemonic(DEV_MNEMONIC, 0));
const validator = randomKeyPair();
const dir = mkdtempSync(join(tmpdir(), 'prof-'));
const dev = await F.openChain(dir, F.devParams(validator, [sender.address]), validator, 1000);
const tokenAddr = getCreateAddress({ from: sender.address, nonce: 0 }).toLowerCase();
const loopAddr = getCreateAddress({ from: sender.address, nonce: 1 }).toLowerCase();
const raws = [
  sender.raw(undefined, F.deployData('Token', ['Bench', 'BEN', 10n ** 24n])),
  sender.raw(undefined, F.deployData('Loop')),
  sender.raw(tokenAddr, F.callData('Token', 'transfer', [`0x${'cd'.repeat(20)}`, 10n ** 18n])),
  sender.raw(loopAddr, F.callData('Loop', 'loop', [1000n]), { gas: 1_000_000n }),
];
for (const raw of raws) await F.produce(dev, [F.storedEvmTransaction(raw, Math.floor(Date.now() / 1000))]);
const which = process.argv[5] === 'erc20' ? 2 : 3;
const id = F.storedEvmTransaction(raws[which]).txid;
const pool = new TracePool({});
const mode = process.argv[2] ?? 'inproc';
const ctx = mode === 'worker' ? { chain: dev.chain, evmTraces: pool } : { chain: dev.chain };
const opts = process.argv[3] === 'call' ? { ...DEFAULT_TRACE_OPTIONS, tracer: 'callTracer' } : DEFAULT_TRACE_OPTIONS;
const N = Number(process.argv[6] ?? 5);
for (let round = 0; round < 3; round++) {
  const times = [];
  for (let i = 0; i < N; i++) {
    const t0 = performance.now();
    const r = await traceTransaction(ctx, id, opts);
    stringifyExact(r);
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  console.log(mode, 'median', times[Math.floor(N/2)].toFixed(2), 'min', times[0].toFixed(2));
}
if (process.argv[4] === 'prof') {
  const { Session } = await import('node:inspector/promises');
  const s = new Session(); s.connect(); await s.post('Profiler.enable'); await s.post('Profiler.start');
  for (let i = 0; i < N; i++) stringifyExact(await traceTransaction(ctx, id, opts));
  const { profile } = await s.post('Profiler.stop');
  const self = new Map(); const dt = profile.timeDeltas; const byId = new Map(profile.nodes.map(n => [n.id, n]));
  profile.samples.forEach((sid, i) => { const n = byId.get(sid); const k = `${n.callFrame.functionName}@${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + (dt[i] ?? 0)); });
  console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 30).map(([k, v]) => `${(v / 1000).toFixed(0)}ms ${k}`).join('\n'));
}
await pool.close(); await dev.close(); rmSync(dir, { recursive: true, force: true });
