/**
 * Node CPU per automined simple send on the dev chain (issue 28, section 5: goal <= 5 ms): `npm run build && node
 * dist/bench/dev-send.js [sends] [rounds]` starts `--dev --block-time-ms 0` as a process, warms it up with a
 * hundred sends, then sends `sends` value transfers one after another as a test suite does (each answered once its
 * block is committed), by eth_sendRawTransaction (signed here beforehand) and by eth_sendTransaction (the node
 * estimates, fills, signs). The figure is the node process's CPU (every thread, /proc) per send, and the wall time
 * per send; prints Markdown rows for bench/RESULTS.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ethers } from 'ethers';
import { DEV_MNEMONIC } from '../ts/ledger/keys.js';
import { type Server, processCpuMs, startNative, stopServer } from './http-load-procs.js';

const CHAIN_ID = 7120n;
const WARM_UP_SENDS = 100;

async function rpc(server: Server, method: string, params: unknown[]): Promise<unknown> {
  const res = await fetch(`http://127.0.0.1:${server.port}${server.rpcPath}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  });
  const body = (await res.json()) as { result?: unknown; error?: { message: string } };
  if (body.error) throw new Error(`${method}: ${body.error.message}`);
  return body.result;
}

/** Signed EIP-1559 transfers of 1 wei from `wallet`, nonces from `first`. */
function signedTransfers(wallet: ethers.HDNodeWallet, to: string, first: number, count: number): Promise<string[]> {
  return Promise.all(
    Array.from({ length: count }, (_, i) =>
      wallet.signTransaction({
        type: 2,
        chainId: CHAIN_ID,
        to,
        value: 1n,
        nonce: first + i,
        gasLimit: 21_000n,
        maxFeePerGas: 3_000_000_000n,
        maxPriorityFeePerGas: 1_000_000_000n,
      }),
    ),
  );
}

/** CPU ms (node process) and wall ms of `count` sequential sends. */
async function measure(server: Server, count: number, send: (i: number) => Promise<unknown>): Promise<Cost> {
  const cpu0 = processCpuMs(server.child.pid) ?? Number.NaN;
  const t0 = performance.now();
  for (let i = 0; i < count; i++) await send(i);
  const wall = performance.now() - t0;
  const cpu = (processCpuMs(server.child.pid) ?? Number.NaN) - cpu0;
  return { cpu: cpu / count, wall: wall / count };
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface Cost {
  cpu: number;
  wall: number;
}
type Round = { raw: Cost; node: Cost };

async function round(sends: number): Promise<Round> {
  const data = mkdtempSync(join(tmpdir(), 'native-bench-dev-send-'));
  const server = await startNative('uws', data, ['--block-time-ms', '0']);
  try {
    const raw = ethers.HDNodeWallet.fromPhrase(DEV_MNEMONIC, undefined, "m/44'/60'/0'/0/1");
    const from = ethers.HDNodeWallet.fromPhrase(DEV_MNEMONIC, undefined, "m/44'/60'/0'/0/2").address;
    const to = ethers.HDNodeWallet.fromPhrase(DEV_MNEMONIC, undefined, "m/44'/60'/0'/0/3").address;
    const txs = await signedTransfers(raw, to, 0, WARM_UP_SENDS + sends);
    for (let i = 0; i < WARM_UP_SENDS; i++) await rpc(server, 'eth_sendRawTransaction', [txs[i]]);
    for (let i = 0; i < WARM_UP_SENDS; i++) await rpc(server, 'eth_sendTransaction', [{ from, to, value: '0x1' }]);
    const rawRun = await measure(server, sends, (i) => rpc(server, 'eth_sendRawTransaction', [txs[WARM_UP_SENDS + i]]));
    const nodeRun = await measure(server, sends, () => rpc(server, 'eth_sendTransaction', [{ from, to, value: '0x1' }]));
    return { raw: rawRun, node: nodeRun };
  } finally {
    await stopServer(server.child);
    rmSync(data, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const sends = Number(process.argv[2] ?? 500);
  const rounds = Number(process.argv[3] ?? 3);
  const load0 = loadavg()[0];
  const results: Round[] = [];
  for (let r = 0; r < rounds; r++) results.push(await round(sends));
  const load1 = loadavg()[0];
  const ms = (v: number): string => `${v.toFixed(2)} ms`;
  const row = (what: string, pick: (x: Round) => Cost) => {
    const cpu = results.map((x) => pick(x).cpu);
    const wall = results.map((x) => pick(x).wall);
    return `| ${what} | ${ms(median(cpu))} (${cpu.map((c) => c.toFixed(2)).join(' / ')}) | ${ms(median(wall))} | ${median(cpu) <= 5 ? 'met' : 'MISSED'} |`;
  };
  console.log(`${new Date().toISOString()}, ${sends} sends x ${rounds} rounds, load ${load0.toFixed(1)} -> ${load1.toFixed(1)}`);
  console.log(
    '| Automined simple send (`--dev --block-time-ms 0`) | node CPU per send (median; rounds) | wall per send | goal <= 5 ms |',
  );
  console.log('| --- | --- | --- | --- |');
  console.log(row('eth_sendRawTransaction (signed by the client)', (x) => x.raw));
  console.log(row('eth_sendTransaction (the node estimates, fills and signs)', (x) => x.node));
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
