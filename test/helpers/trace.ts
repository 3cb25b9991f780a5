import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { compiled } from './contracts.js';
import { ethersWallet, signCall, waitReceipt } from './evm.js';
import { httpJson } from './node.js';
import { tempDir } from './util.js';

/** The hardhat@2 project of the tests (hardhat resolves from the repo's node_modules). */
const HARDHAT_FIXTURE = fileURLToPath(new URL('../../../test/fixtures/hardhat/', import.meta.url));

export const tracerIface = new ethers.Interface(compiled('Tracer').abi);

/** A named signed transaction of the trace scenario. */
export interface ScenarioTx {
  name: string;
  raw: string;
  hash: string;
}

/**
 * The signed transactions every trace test uses (dev account 1, nonces from 0): deploy Tracer, then calls
 * with nested calls and CREATE2, a revert caught inside a call, a precompile, refunds, SELFDESTRUCT of a
 * contract created in the same transaction, a revert and an out-of-gas loop.
 */
export async function scenario(url: string): Promise<ScenarioTx[]> {
  const w = ethersWallet(url, 1);
  const tracer = ethers.getCreateAddress({ from: w.address, nonce: 0 });
  const call = (m: string, args: unknown[] = []) => tracerIface.encodeFunctionData(m, args);
  const plan: [string, string | null, string, bigint, bigint?][] = [
    ['deploy', null, compiled('Tracer').bytecode, 1_000_000n],
    ['nested', tracer, call('nested', [7n]), 600_000n],
    ['nestedAgain', tracer, call('nested', [8n]), 300_000n],
    ['refund', tracer, call('refund'), 100_000n],
    ['destroy', tracer, call('destroy'), 300_000n, 12345n],
    ['boom', tracer, call('boom'), 100_000n],
    ['outOfGas', tracer, call('burn'), 60_000n],
    ['loop', tracer, call('loop', [20n]), 200_000n],
  ];
  const out: ScenarioTx[] = [];
  for (const [i, [name, to, data, gas, value]] of plan.entries()) {
    const raw = await w.signTransaction({
      type: 2,
      chainId: 7120n,
      to,
      data,
      nonce: i,
      gasLimit: gas,
      value: value ?? 0n,
      maxFeePerGas: 2_000_000_000n,
      maxPriorityFeePerGas: 1n,
    });
    out.push({ name, raw, hash: ethers.keccak256(raw) });
  }
  return out;
}

/** Submit the scenario to the node in order and wait for every receipt. */
export async function submitScenario(url: string, txs: ScenarioTx[]): Promise<void> {
  for (const tx of txs) {
    const r = await httpJson(`${url}/rpc`, {
      method: 'POST',
      json: { jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [tx.raw] },
    });
    if (!r.body?.result) throw new Error(`${tx.name}: ${JSON.stringify(r.body)}`);
  }
  for (const tx of txs) await waitReceipt(url, tx.hash);
}

export { signCall };

/** Run the same transactions on hardhat's in-process network and trace them there (one JSON answer). */
export function hardhatTraces(
  txs: ScenarioTx[],
  traces: { hash: string; options?: unknown }[],
): Promise<{ receipts: any[]; traces: { result?: any; error?: string }[] }> {
  const tmp = tempDir();
  const input = join(tmp.dir, 'input.json');
  writeFileSync(input, JSON.stringify({ rawTxs: txs.map((t) => t.raw), traces }));
  const env = {
    ...process.env,
    NATIVE_TRACE_INPUT: input,
    HARDHAT_DISABLE_TELEMETRY_PROMPT: 'true',
    HARDHAT_DISABLE_TELEMETRY: 'true',
    CI: 'true',
    NO_COLOR: '1',
    npm_config_update_notifier: 'false',
  };
  return new Promise((resolve, reject) => {
    // Asynchronous on purpose: the node under test runs in this process and must keep serving.
    execFile(
      'npx',
      ['--no', 'hardhat', 'run', '--no-compile', '--network', 'hardhat', 'scripts/trace.cjs'],
      { cwd: HARDHAT_FIXTURE, env, timeout: 120_000, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
      (err, stdout, stderr) => {
        tmp.cleanup();
        const line = stdout.split('\n').find((l) => l.startsWith('{'));
        if (err || !line) return reject(new Error(`hardhat failed: ${err?.message}\n${stderr}\n${stdout.slice(0, 2000)}`));
        resolve(JSON.parse(line));
      },
    );
  });
}
