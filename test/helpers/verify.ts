import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { ethers } from 'ethers';
import { ethersProvider, ethersWallet } from './evm.js';
import { type JsonResponse, httpJson } from './node.js';
import { waitFor } from './util.js';

/** Contracts of the verification tests (read from the source tree, like test/fixtures/contracts). */
export const VERIFY_DIR = fileURLToPath(new URL('../../../test/fixtures/verify/contracts/', import.meta.url));
export const CONTRACTS_DIR = fileURLToPath(new URL('../../../test/fixtures/contracts/', import.meta.url));

const require = createRequire(import.meta.url);

/** Settings as Hardhat and Foundry projects commonly compile. */
export const DEFAULT_SETTINGS = { optimizer: { enabled: true, runs: 200 } };

/** What a developer has after compiling: the target contract's metadata, ABI, code and the sources. */
export interface Build {
  path: string;
  name: string;
  metadata: string;
  abi: any[];
  /** Creation code, 0x hex (library placeholders unlinked). */
  bytecode: string;
  /** Runtime code as compiled (immutables zeroed, libraries unlinked). */
  deployedBytecode: string;
  sources: Record<string, string>;
  settings: Record<string, unknown>;
}

export const fixture = (name: string, dir = VERIFY_DIR): string => readFileSync(`${dir}${name}`, 'utf8');

const builds = new Map<string, Build>();

/** Compile `sources` (path -> content) with the bundled solc (offline) and return the `path:name` contract. */
export function build(
  sources: Record<string, string>,
  path: string,
  name: string,
  settings: Record<string, unknown> = DEFAULT_SETTINGS,
): Build {
  const key = JSON.stringify([sources, path, name, settings]);
  const hit = builds.get(key);
  if (hit) return hit;
  const solc = require('solc') as { compile(input: string): string };
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([p, content]) => [p, { content }])),
    settings: {
      ...settings,
      outputSelection: { '*': { '*': ['abi', 'metadata', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const out = JSON.parse(solc.compile(JSON.stringify(input)));
  const errors = (out.errors ?? []).filter((e: { severity: string }) => e.severity === 'error');
  if (errors.length) throw new Error(`solc: ${errors.map((e: { formattedMessage: string }) => e.formattedMessage).join('\n')}`);
  const c = out.contracts[path][name];
  const b: Build = {
    path,
    name,
    metadata: c.metadata,
    abi: c.abi,
    bytecode: `0x${c.evm.bytecode.object}`,
    deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
    sources,
    settings,
  };
  builds.set(key, b);
  return b;
}

/** Fill library placeholders: `{ 'contracts/MathLib.sol:MathLib': address }`. */
export function link(bytecode: string, libraries: Record<string, string>): string {
  const linker = require('solc/linker') as { linkBytecode(code: string, libs: Record<string, string>): string };
  return `0x${linker.linkBytecode(bytecode.slice(2), libraries)}`;
}

/** The Sourcify upload of a build: metadata.json and the sources (under their file names only, as Foundry sends). */
export function filesOf(b: Build): Record<string, string> {
  return { 'metadata.json': b.metadata, ...b.sources };
}

/** Dev account i on its own provider, destroyed when the test ends. */
export function testWallet(t: { teardown(fn: () => void): void }, url: string, i: number): ethers.Wallet {
  const provider = ethersProvider(url);
  t.teardown(() => provider.destroy());
  return ethersWallet(url, i, provider);
}

/** Deploy with ethers (through the node's JSON-RPC); the address and the creation transaction's hash. */
export async function deploy(
  w: ethers.Wallet,
  b: Build,
  args: unknown[] = [],
  bytecode = b.bytecode,
): Promise<{ address: string; hash: string }> {
  const c = await new ethers.ContractFactory(b.abi, bytecode, w).deploy(...args);
  const tx = c.deploymentTransaction()!;
  await tx.wait(1, 60_000);
  return { address: await c.getAddress(), hash: tx.hash };
}

/** POST a Sourcify v1 verification (`path` /verify, or /sourcify for Hardhat's shape). */
export function postVerify(url: string, body: Record<string, unknown>, path = '/verify'): Promise<JsonResponse> {
  return httpJson(`${url}${path}`, { method: 'POST', json: body });
}

/** Poll a v2 job until it completes (Foundry's `--watch`). */
export function waitJob(url: string, id: string, base = '', timeoutMs = 120_000): Promise<any> {
  return waitFor(
    async () => {
      const r = await httpJson(`${url}${base}/v2/verify/${id}`);
      if (r.status !== 200) throw new Error(`job ${id}: HTTP ${r.status} ${r.text}`);
      return r.body.isJobCompleted ? r.body : null;
    },
    timeoutMs,
    `verification job ${id}`,
  );
}

/** First differing byte of two hex codes (what the service must name). */
export function firstDifference(a: string, b: string): number {
  const x = ethers.getBytes(a);
  const y = ethers.getBytes(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return i;
  return n;
}
