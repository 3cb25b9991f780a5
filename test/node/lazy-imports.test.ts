/**
 * What a start loads before it needs it (issue 25, docs/operations.md "Start-up time"): the static import
 * graph of the built modules, read from dist. `--help` and `--version` must answer from the flag table and
 * the version alone; a node without --p2p-port must not load libp2p, nor gRPC before its API listens, nor
 * viem before the first ABI decode. (Dynamic `import()` is how those load later; this reads static imports.)
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';

/** dist/ts of this build (this file runs as dist/test/node/lazy-imports.test.js). */
const DIST_TS = fileURLToPath(new URL('../../ts/', import.meta.url));
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gm;

/** Every module `entry` loads statically: our files (paths under dist/ts) and packages (their names). */
function staticGraph(entry: string): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>([resolve(DIST_TS, entry)]);
  const packages = new Set<string>();
  const queue = [...files];
  for (let file = queue.shift(); file; file = queue.shift()) {
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      if (spec.startsWith('.')) {
        const next = resolve(dirname(file), spec);
        if (!files.has(next) && existsSync(next)) {
          files.add(next);
          queue.push(next);
        }
      } else if (!spec.startsWith('node:')) {
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
      }
    }
  }
  return { files, packages };
}

const ours = (files: Set<string>) => [...files].map((f) => f.slice(DIST_TS.length)).sort();

test('the command loads only the flag table and the version before reading the flags', (t) => {
  const { files, packages } = staticGraph('node/main.js');
  t.deepEqual([...packages], []);
  // The flag table, the version and the defaults it shows, through their folders' light doors (light.ts).
  t.true(files.size <= 12, `main.js loads ${ours(files).join(', ')}`);
  for (const heavy of ['node/node.js', 'node/config.js', 'services/index.js', 'chain/chain.js']) {
    t.false(ours(files).includes(heavy), `${heavy} is loaded before the flags are read`);
  }
});

test('a node loads libp2p, gRPC and viem only when it uses them', (t) => {
  const { files, packages } = staticGraph('node/node.js');
  for (const lazy of ['libp2p', '@libp2p/crypto', '@chainsafe/libp2p-noise', '@grpc/grpc-js', '@bufbuild/protobuf', 'viem']) {
    t.false(packages.has(lazy), `${lazy} is loaded by every start`);
  }
  for (const lazy of ['node/network.js', 'node/grpc-wiring.js', 'grpc/index.js', 'network/index.js']) {
    t.false(ours(files).includes(lazy), `${lazy} is loaded by every start`);
  }
  // What every start does need is still there (the walk itself works).
  t.true(packages.has('@ethereumjs/vm'));
  t.true(ours(files).includes('grpc/web-route.js'));
});
