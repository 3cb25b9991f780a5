// The import rules of ts/ (docs/architecture.md, "Doors and layers"), checked by `npm run check:architecture`
// (scripts/check-architecture.mjs, part of `npm test`). Type-only imports count like any other.

/**
 * Layers, top to bottom. A folder imports only folders of lower layers (later rows), never one of its own row
 * or above: the order of docs/architecture.md.
 */
const LAYERS = [
  ['node'],
  ['api'],
  ['rpc', 'grpc', 'explorer', 'cli', 'metrics'],
  ['dev'],
  ['services', 'sync'],
  ['indexes', 'events'],
  ['verify', 'consensus'],
  ['mempool'],
  ['snapshot'],
  ['chain'],
  ['execution'],
  ['ledger'],
  ['modules'],
  ['state'],
  ['storage', 'crypto', 'network', 'http'],
  ['util'],
];

const folderRe = (names) => `^ts/(${names.join('|')})/`;

const layerRules = LAYERS.slice(1).map((row, i) => {
  const above = LAYERS.slice(0, i + 1).flat();
  return {
    name: `layer-${row.join('-')}`,
    comment: `ts/{${row.join(',')}} import only lower layers: never ${above.join(', ')}, nor each other (docs/architecture.md)`,
    severity: 'error',
    from: { path: folderRe(row) },
    to: { path: `${folderRe([...above, ...row])}`, pathNot: '^ts/$1/' },
  };
});

/** A file of another folder that is not its door. */
const innerFileOfAnotherFolder = { path: '^ts/[^/]+/', pathNot: ['^ts/$1/', '^ts/[^/]+/(index|interface|light)\\.ts$'] };

module.exports = {
  forbidden: [
    {
      name: 'doors',
      comment:
        "Another folder of ts/ is entered through its door only: ts/<folder>/index.ts, or interface.ts for its contract (rewrite with the doors codemod, or export the name from the folder's index.ts)",
      severity: 'error',
      from: { path: '^ts/([^/]+)/' },
      to: innerFileOfAnotherFolder,
    },
    {
      name: 'test-doors',
      comment:
        'A test of a folder (test/<folder>/, test/evm for ts/execution) may import its inner files; every other folder of ts/ only through its door',
      severity: 'error',
      from: { path: '^test/([^/]+)/', pathNot: '^test/evm/' },
      to: innerFileOfAnotherFolder,
    },
    {
      name: 'test-doors-evm',
      comment: 'test/evm tests ts/execution: other folders only through their doors',
      severity: 'error',
      from: { path: '^test/evm/' },
      to: { path: '^ts/[^/]+/', pathNot: ['^ts/execution/', '^ts/[^/]+/(index|interface|light)\\.ts$'] },
    },
    ...layerRules,
    {
      name: 'folder-in-a-layer',
      comment: 'Every folder of ts/ has its place in LAYERS above (and a paragraph in docs/architecture.md)',
      severity: 'error',
      from: { path: '^ts/[^/]+/', pathNot: folderRe(LAYERS.flat()) },
      to: {},
    },
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only ones included',
      severity: 'error',
      from: { path: '^ts/' },
      to: { circular: true },
    },
    {
      name: 'ts-not-to-test-or-bench',
      comment: 'The node does not import its tests or benchmarks',
      severity: 'error',
      from: { path: '^ts/' },
      to: { path: '^(test|bench)/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules', '^dist/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
};
