#!/usr/bin/env node
// The import rules of .dependency-cruiser.cjs over ts/ and test/, and the folder graph in docs/architecture.md.
//
//   node scripts/check-architecture.mjs         check: every rule holds and the graph in the docs is current
//   node scripts/check-architecture.mjs graph   rewrite the graph in docs/architecture.md from the code
//
// dependency-cruiser's own command line refuses Node 20 (its engines field asks for 22+); its library API, the
// same cruise and reporters, runs here, so this script calls that rather than the `depcruise` binary.
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise, format } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
process.chdir(root);
const config = createRequire(import.meta.url)(join(root, '.dependency-cruiser.cjs'));
const tsConfig = extractTSConfig(join(root, 'tsconfig.json'));
const DOC = join(root, 'docs', 'architecture.md');
const START = '<!-- architecture-graph:start (npm run graph:architecture writes this; do not edit) -->';
const END = '<!-- architecture-graph:end -->';

/** The folder-level graph of ts/ as a mermaid block. */
async function folderGraph() {
  const r = await cruise(['ts'], { ...config.options, includeOnly: '^ts/', collapse: '^ts/[^/]+', outputType: 'mermaid' }, undefined, {
    tsConfig,
  });
  // The reporter names nodes by generated ids (1, 2, …, A, B, …); written with the folder names, the block reads as text too.
  const names = new Map();
  const edges = [];
  for (const line of String(r.output).split('\n')) {
    const node = /^(\w+)\["ts\/?([^"]*)"\]$/.exec(line) ?? /^(\w+)\["([^"]+)"\]$/.exec(line);
    if (node) names.set(node[1], node[2]);
    const edge = /^(\w+)-->(\w+)$/.exec(line);
    if (edge) edges.push([edge[1], edge[2]]);
  }
  const lines = edges.map(([a, b]) => `  ${names.get(a)} --> ${names.get(b)}`).sort();
  return `${START}\n\`\`\`mermaid\nflowchart TD\n${lines.join('\n')}\n\`\`\`\n${END}`;
}

function withGraph(doc, graph) {
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  if (a < 0 || b < a) throw new Error(`docs/architecture.md has no ${START} … ${END} section`);
  return doc.slice(0, a) + graph + doc.slice(b + END.length);
}

if (process.argv[2] === 'graph') {
  writeFileSync(DOC, withGraph(readFileSync(DOC, 'utf8'), await folderGraph()));
  console.log('docs/architecture.md: folder graph written');
} else {
  const result = await cruise(['ts', 'test'], { ...config.options, validate: true, ruleSet: { forbidden: config.forbidden } }, undefined, {
    tsConfig,
  });
  const report = await format(result.output, { outputType: 'err' });
  process.stdout.write(report.output.endsWith('\n') ? report.output : `${report.output}\n`);
  let failed = result.exitCode !== 0;
  const doc = readFileSync(DOC, 'utf8');
  if (withGraph(doc, await folderGraph()) !== doc) {
    console.error('docs/architecture.md: the folder graph differs from the code; run `npm run graph:architecture`');
    failed = true;
  }
  process.exit(failed ? 1 : 0);
}
