import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Solidity sources shared by the EVM tests and benchmarks (not compiled by tsc: read from the source tree). */
export const CONTRACTS_DIR = fileURLToPath(new URL('../../../test/fixtures/contracts/', import.meta.url));

export interface CompiledContract {
  abi: any[];
  /** Creation code (constructor arguments not included). */
  bytecode: `0x${string}`;
  /** Runtime code, as eth_getCode returns it after deployment (no immutables in the fixtures). */
  deployedBytecode: `0x${string}`;
}

export type ContractName = 'Box' | 'Probe' | 'Token' | 'Tracer' | 'Child' | 'Logic' | 'Proxy' | 'Cases' | 'Reverter' | 'EnvProbe';

const require = createRequire(import.meta.url);

const SETTINGS = {
  optimizer: { enabled: true, runs: 200 },
  outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
};

function readSources(): Record<string, { content: string }> {
  const files = readdirSync(CONTRACTS_DIR)
    .filter((f) => f.endsWith('.sol'))
    .sort();
  return Object.fromEntries(files.map((f) => [f, { content: readFileSync(join(CONTRACTS_DIR, f), 'utf8') }]));
}

function solcCompile(sources: Record<string, { content: string }>): Record<string, CompiledContract> {
  const solc = require('solc') as { compile(input: string): string };
  const out = JSON.parse(solc.compile(JSON.stringify({ language: 'Solidity', sources, settings: SETTINGS }))) as {
    errors?: { severity: string; formattedMessage: string }[];
    contracts: Record<
      string,
      Record<string, { abi: any[]; evm: { bytecode: { object: string }; deployedBytecode: { object: string } } }>
    >;
  };
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
  const result: Record<string, CompiledContract> = {};
  for (const file of Object.values(out.contracts)) {
    for (const [name, c] of Object.entries(file)) {
      result[name] = {
        abi: c.abi,
        bytecode: `0x${c.evm.bytecode.object}`,
        deployedBytecode: `0x${c.evm.deployedBytecode.object}`,
      };
    }
  }
  return result;
}

/**
 * Compile every test/fixtures/contracts/*.sol with the bundled solc (offline). The output is cached in
 * memory for the process and on disk under the OS temp dir keyed by the sources, settings and compiler
 * version, so parallel test processes (and reruns) skip the ~1 s compile and the solc load.
 */
function compileAll(): Record<string, CompiledContract> {
  const sources = readSources();
  const version = (require('solc/package.json') as { version: string }).version;
  const key = createHash('sha256').update(JSON.stringify({ version, SETTINGS, sources })).digest('hex').slice(0, 32);
  const dir = join(tmpdir(), 'native-solc-cache');
  const file = join(dir, `${key}.json`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as Record<string, CompiledContract>;
  } catch {
    /* not cached yet (or unreadable): compile */
  }
  const compiled = solcCompile(sources);
  try {
    mkdirSync(dir, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(compiled));
    renameSync(tmp, file); // atomic: a concurrent reader sees the whole file or none
  } catch {
    /* the cache is an optimisation only */
  }
  return compiled;
}

let cached: Record<string, CompiledContract> | null = null;

export function compiledContracts(): Record<string, CompiledContract> {
  cached ??= compileAll();
  return cached;
}

export function compiled(name: ContractName): CompiledContract {
  const c = compiledContracts()[name];
  if (!c) throw new Error(`contract ${name} not found in ${CONTRACTS_DIR}`);
  return c;
}
