/**
 * Which compiler compiles a contract: the solc-js bundled with the npm `solc` dependency, or a soljson file
 * from the compiler directory (`--solc-dir`), named as binaries.soliditylang.org names them
 * (`soljson-v0.8.20+commit.a1b79de6.js`). Resolved on the main thread (a missing version fails at once);
 * loaded by the compile worker (compile-worker.ts).
 */
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { CompilerNotAvailableError } from './errors.js';

const require = createRequire(import.meta.url);

/** Where a compiler version comes from. */
export type CompilerRef = { kind: 'bundled'; version: string } | { kind: 'file'; version: string; path: string };

/** Where soljson files of every release are published. */
export const SOLJSON_SOURCE = 'https://binaries.soliditylang.org/bin/';

/** The npm solc package's version (0.8.37): the bundled compiler's release, without its commit. */
export function bundledRelease(): string {
  return (require('solc/package.json') as { version: string }).version;
}

/** File name of a version in a compiler directory. */
export const soljsonFileName = (version: string): string => `soljson-v${version}.js`;

/**
 * The compiler for `version` (0.8.37+commit.f401782d): a file in `solcDir` when there is one (an operator's
 * choice wins), else the bundled solc when its release matches (the worker checks the commit), else a clear
 * error naming the version and how to add it.
 */
export function resolveCompiler(version: string, solcDir: string | undefined): CompilerRef {
  if (!/^\d+\.\d+\.\d+(\+commit\.[0-9a-f]{8})?$/.test(version))
    throw new CompilerNotAvailableError(`invalid compiler version ${version}: expected e.g. 0.8.37+commit.f401782d`);
  if (solcDir) {
    const path = resolve(join(solcDir, soljsonFileName(version)));
    if (existsSync(path)) return { kind: 'file', version, path };
  }
  const bundled = bundledRelease();
  if (version.split('+')[0] === bundled) return { kind: 'bundled', version };
  const file = soljsonFileName(version);
  const how = solcDir
    ? `add ${file} (from ${SOLJSON_SOURCE}) to the compiler directory ${solcDir}`
    : `download ${file} from ${SOLJSON_SOURCE} into a directory and start the verifier with --solc-dir <that directory>`;
  throw new CompilerNotAvailableError(
    `compiler ${version} is not available: this verifier has solc ${bundled} built in${solcDir ? ` and ${solcDir} has no ${file}` : ''}; to add it, ${how}`,
  );
}
