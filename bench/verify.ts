/**
 * Contract verification time: an ERC-20 (test/fixtures/contracts/Token.sol, constructor arguments) deployed
 * on a dev node and verified through POST /verify, end to end (metadata and sources in, perfect match stored).
 * The first verification loads solc on the compile worker (cold); the rest find it loaded (cached compiler,
 * the goal: <= 2 s). JSON-RPC answers during the verifications are timed alongside.
 *
 * `npm run bench:verify` prints the rows and writes the "Contract verification" section of bench/RESULTS.md;
 * `npm run bench` includes the same section.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { pino } from 'pino';
import { parseConfig } from '../ts/node/config.js';
import { NativeNode } from '../ts/node/node.js';
import type { Row } from './ledger.js';

const require = createRequire(import.meta.url);
const TOKEN = fileURLToPath(new URL('../../test/fixtures/contracts/Token.sol', import.meta.url));
const RESULTS = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
export const VERIFY_SECTION = 'Contract verification';
/** Timed verifications with the compiler loaded. */
const RUNS = 5;
const GOAL_MS = 2000;

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const DEV_KEY = '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';

interface Build {
  abi: unknown[];
  bytecode: string;
  metadata: string;
  source: string;
}

function compileToken(): Build {
  const solc = require('solc') as { compile(input: string): string };
  const source = readFileSync(TOKEN, 'utf8');
  const out = JSON.parse(
    solc.compile(
      JSON.stringify({
        language: 'Solidity',
        sources: { 'contracts/Token.sol': { content: source } },
        settings: {
          optimizer: { enabled: true, runs: 200 },
          outputSelection: { '*': { '*': ['abi', 'metadata', 'evm.bytecode.object'] } },
        },
      }),
    ),
  );
  const c = out.contracts['contracts/Token.sol'].Token;
  return { abi: c.abi, bytecode: `0x${c.evm.bytecode.object}`, metadata: c.metadata, source };
}

export async function benchVerification(log: (s: string) => void = () => undefined): Promise<{ rows: Row[]; md: string[] }> {
  const dir = mkdtempSync(join(tmpdir(), 'native-bench-verify-'));
  const config = {
    ...parseConfig(['--dev'], {}),
    apiPort: 0,
    grpcPort: null,
    dataDir: dir,
    blockTimeMs: 200,
    logLevel: 'silent',
  };
  const node = await NativeNode.start(config, pino({ level: 'silent' }));
  const url = `http://127.0.0.1:${node.http.port}`;
  const provider = new ethers.JsonRpcProvider(
    `${url}/rpc`,
    { chainId: 7120, name: 'native' },
    { staticNetwork: true, pollingInterval: 50, cacheTimeout: -1 },
  );
  const load = loadavg().map((l) => l.toFixed(1));
  try {
    const wallet = new ethers.Wallet(DEV_KEY, provider);
    const b = compileToken();
    const factory = new ethers.ContractFactory(b.abi as ethers.InterfaceAbi, b.bytecode, wallet);
    const addresses: string[] = [];
    for (let i = 0; i <= RUNS; i++) {
      const c = await factory.deploy(`Bench ${i}`, `B${i}`, 10n ** 24n + BigInt(i));
      await c.deploymentTransaction()!.wait(1, 60_000);
      addresses.push(await c.getAddress());
    }
    const files = { 'metadata.json': b.metadata, 'contracts/Token.sol': b.source };
    const rpcMs: number[] = [];
    const verify = async (address: string): Promise<number> => {
      let done = false;
      const t0 = performance.now();
      const answer = fetch(`${url}/verify`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ address, chain: '7120', files }),
      }).then(async (r) => {
        done = true;
        const body = (await r.json()) as { result?: { status: string }[]; error?: string };
        if (r.status !== 200 || body.result?.[0]?.status !== 'perfect')
          throw new Error(`verify ${address}: ${r.status} ${JSON.stringify(body)}`);
      });
      // JSON-RPC round trips while it verifies.
      while (!done) {
        const r0 = performance.now();
        await provider.send('eth_blockNumber', []);
        rpcMs.push(performance.now() - r0);
      }
      await answer;
      return performance.now() - t0;
    };
    log('  cold ...');
    const cold = await verify(addresses[0]);
    const warm: number[] = [];
    for (let i = 1; i <= RUNS; i++) {
      warm.push(await verify(addresses[i]));
      log(`  run ${i}: ${Math.round(warm.at(-1)!)} ms`);
    }
    const m = median(warm);
    const rows: Row[] = [
      {
        name: 'ERC-20 verification, cold (solc loaded on the compile worker)',
        value: `${Math.round(cold)} ms`,
        note: 'POST /verify to perfect match stored',
      },
      {
        name: 'ERC-20 verification, cached compiler',
        value: `${Math.round(m)} ms`,
        note: `median of ${RUNS} (${warm.map((x) => Math.round(x)).join(', ')} ms); goal <= ${GOAL_MS} ms: ${m <= GOAL_MS ? 'met' : 'MISSED'}`,
      },
      {
        name: 'eth_blockNumber during verifications',
        value: `median ${median(rpcMs).toFixed(1)} ms, max ${Math.max(...rpcMs).toFixed(1)} ms`,
        note: `${rpcMs.length} calls, one at a time, while compilations ran on the worker`,
      },
    ];
    const md = [
      `- Date: ${new Date().toISOString()}; load average ${load.join(' / ')} (1/5/15 min) on 2 shared cores at the start.`,
      '- Command: `npm run bench:verify` (bench/verify.ts): a dev node in-process, an ERC-20 with three constructor',
      '  arguments (test/fixtures/contracts/Token.sol) deployed with ethers, then POST /verify with metadata.json and',
      '  the source: fetch the code, compile on the worker, match, find the creation transaction, decode and store.',
      '',
    ];
    return { rows, md };
  } finally {
    provider.destroy();
    await node.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Replace (or append) this section of bench/RESULTS.md. */
function writeSection(rows: Row[], md: string[]): void {
  const section = [
    `## ${VERIFY_SECTION}`,
    '',
    ...md,
    '| Measurement | Result | Notes |',
    '|---|---|---|',
    ...rows.map((r) => `| ${r.name} | ${r.value} | ${r.note ?? ''} |`),
    '',
  ].join('\n');
  const text = readFileSync(RESULTS, 'utf8');
  const start = text.indexOf(`## ${VERIFY_SECTION}\n`);
  if (start < 0) {
    writeFileSync(RESULTS, `${text.trimEnd()}\n\n${section}`);
    return;
  }
  const next = text.indexOf('\n## ', start + 1);
  writeFileSync(RESULTS, `${text.slice(0, start)}${section}${next < 0 ? '' : text.slice(next + 1)}`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  benchVerification((s) => process.stdout.write(`${s}\n`)).then(
    ({ rows, md }) => {
      writeSection(rows, md);
      for (const r of rows) process.stdout.write(`| ${r.name} | ${r.value} | ${r.note ?? ''} |\n`);
      process.exit(0);
    },
    (err) => {
      process.stderr.write(`${(err as Error).stack}\n`);
      process.exit(1);
    },
  );
}
