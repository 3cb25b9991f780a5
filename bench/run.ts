import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { fileURLToPath } from 'node:url';
import { crypto } from '../ts/crypto/index.js';
import { benchCrypto } from './crypto.js';
import { benchEvmExecution, benchGetLogs } from './evm.js';
import { benchEvmGas } from './evm-gas.js';
import { benchHttpSubmission } from './http-e2e.js';
import { baselineMain, benchHttpLoad } from './http-load.js';
import { type Row, benchBlockExecution, benchStateRoot } from './ledger.js';
import { benchNetwork } from './network.js';
import { NFT_SECTION_NOTES, benchNftExecution, benchNftOwnerQuery } from './nft.js';
import { VERIFY_SECTION, benchVerification } from './verify.js';

/** Runs every benchmark and writes bench/RESULTS.md (machine, date, command, numbers). */
async function main(): Promise<void> {
  const sections: { title: string; rows: Row[]; md?: string[] }[] = [];
  const log = (s: string) => process.stdout.write(`${s}\n`);

  log('crypto ...');
  const c = await benchCrypto();
  sections.push({
    title: 'Crypto (JS twin vs native addon)',
    rows: c.map((r) => ({
      name: `${r.name} [${r.backend}]`,
      value: `${Math.round(r.opsPerSec).toLocaleString()} ops/s`,
      note: r.note,
    })),
  });
  log('state root ...');
  sections.push({ title: 'Authenticated state', rows: benchStateRoot() });
  log('block execution ...');
  sections.push({ title: 'Block execution', rows: await benchBlockExecution() });
  log('NFTs ...');
  sections.push({
    title: 'NFTs (SRC-721)',
    md: NFT_SECTION_NOTES,
    rows: [...(await benchNftExecution()), ...(await benchNftOwnerQuery())],
  });
  log(`EVM (crypto backend: ${crypto().name}) ...`);
  sections.push({
    title: 'EVM',
    md: [`Crypto backend in use: \`${crypto().name}\` (the native addon when built: \`npm run build:native\`).`, ''],
    rows: [...(await benchEvmExecution()), ...(await benchGetLogs(log))],
  });
  log('EVM gas throughput ...');
  sections.push({
    title: 'EVM gas throughput and the block slot',
    md: [
      'What block production spends per gas (execute + state root, the part that grows with gas), and what a',
      'full 30M-gas block costs; the proposer packs `--block-pack-gas` (docs/evm.md "Block time"). eth_call',
      'through the call-worker pool against in-process.',
      '',
    ],
    rows: await benchEvmGas(),
  });
  log('contract verification ...');
  const verification = await benchVerification(log);
  sections.push({ title: VERIFY_SECTION, rows: verification.rows, md: verification.md });
  // HTTP load and submit -> inclusion (before/after, ganache) in one run: bench/http-load.ts.
  log('HTTP load vs peers, submit -> inclusion ...');
  let load: Awaited<ReturnType<typeof benchHttpLoad>> | undefined;
  try {
    load = await benchHttpLoad(log);
  } catch (err) {
    sections.push({ title: 'HTTP load vs peers', rows: [], md: [`Failed: ${(err as Error).message}`, ''] });
  }
  log('HTTP end-to-end, node:http clients ...');
  const http: Row[] = [];
  for (const backend of ['uws', 'node'] as const) http.push(...(await benchHttpSubmission(backend)));
  sections.push({
    title: 'End-to-end HTTP submission',
    rows: http,
    md: [
      ...(load?.submission ?? []),
      'Below: the same submission through keep-alive node:http clients (one Agent socket per sender), on both backends.',
      '',
    ],
  });
  if (load) sections.push({ title: 'HTTP load vs peers', rows: [], md: load.md });

  log('network ...');
  try {
    sections.push({ title: 'Network: a 4-validator devnet on this machine', rows: [], md: [...(await benchNetwork(log)), ''] });
  } catch (err) {
    sections.push({
      title: 'Network: a 4-validator devnet on this machine',
      rows: [],
      md: [`Failed: ${(err as Error).message}`, ''],
    });
  }

  const cpu = cpus();
  const before = baselineMain();
  const md = [
    '# Benchmark results',
    '',
    `- Date: ${new Date().toISOString()}`,
    `- Machine: ${cpu.length} x ${cpu[0]?.model ?? 'unknown CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB RAM, ${process.platform}`,
    `- Node.js ${process.version}`,
    `- Command: \`${before ? `BENCH_BASELINE=${process.env.BENCH_BASELINE} ` : ''}npm run bench\` (compiles, then \`node dist/bench/run.js\`)${before ? `; "before" rows: the baseline build in ${process.env.BENCH_BASELINE} (scripts/bench-baseline.sh)` : ''}`,
    '- Shared, noisy machine: treat differences under ~15% as noise.',
    '',
    ...sections.flatMap((s) => [
      `## ${s.title}`,
      '',
      ...(s.md ?? []),
      ...(s.rows.length ? ['| Measurement | Result | Notes |', '|---|---|---|'] : []),
      ...s.rows.map((r) => `| ${r.name} | ${r.value} | ${r.note ?? ''} |`),
      '',
    ]),
  ].join('\n');
  const out = fileURLToPath(new URL('../../bench/RESULTS.md', import.meta.url));
  writeFileSync(out, md);
  log(md);
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
