/**
 * Child process of test/chain/history-indexer.test.ts: builds a random chain in `<dir>`, holds the history
 * indexer back after `indexed` blocks, commits `behind` more, writes the expected states to `<dir>/run.json`
 * and kills itself with SIGKILL: a crash between the blocks' commits and their index batches.
 *   node history-crash-child.js <dir> <indexed> <behind>
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openFixtureChain } from './chain-fixture.js';
import { buildRandomChain, historyParams, runToJson } from './history-chain.js';

async function main(): Promise<void> {
  const [dir, indexed, behind] = process.argv.slice(2);
  const { chain } = await openFixtureChain(dir, historyParams());
  const run = await buildRandomChain(chain, Number(indexed) - 1, 0xbad5eed);
  await chain.blocks.history.flush();
  await chain.blocks.history.pauseIndexing();
  await buildRandomChain(chain, Number(behind), 0x5eed, run);
  writeFileSync(join(dir, 'run.json'), runToJson(run));
  process.kill(process.pid, 'SIGKILL');
}

main().catch((err) => {
  process.stderr.write(`${(err as Error).stack}\n`);
  process.exit(1);
});
