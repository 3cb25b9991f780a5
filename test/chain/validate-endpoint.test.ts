import { join } from 'node:path';
import test from 'ava';
import type { Block } from '../../ts/chain/block.js';
import type { Chain } from '../../ts/chain/chain.js';
import { writeGenesisFile } from '../../ts/chain/genesis.js';
import { saveValidatorKey } from '../../ts/node/index.js';
import {
  alice,
  bob,
  evmTransfer,
  fixtureParams,
  openFixtureChain,
  proposerKey,
  reseal,
  transfer,
  validBlock,
  validatorKeys,
} from '../helpers/chain-fixture.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';

/**
 * Crafted blocks written straight into a data dir (bypassing validation, as a damaged or malicious
 * store would hold them). Each breaks a rule checked before execution, so its state root is left
 * at the parent's and the node still opens on it.
 */
const crafted: { name: string; rule: string; height: number; write: (chain: Chain) => Promise<Block> }[] = [
  {
    name: 'the same key proposing heights 1 and 2',
    rule: 'proposer',
    height: 2,
    write: async (chain) => {
      const b1 = await validBlock(chain, []);
      await chain.importBlock(b1);
      const b2 = await validBlock(chain, []);
      return reseal({ ...b2, validator: b1.validator, state_root: b1.state_root }, proposerKey(chain.params, 1));
    },
  },
  {
    name: 'a native transfer with fee 0, amount 0 and data "hello"',
    rule: 'tx_invalid',
    height: 1,
    write: async (chain) => {
      const b = await validBlock(chain, []);
      const bad = transfer(alice, 0n, { fee: 0n, amount: 0n, data: 'hello' });
      return reseal({ ...b, transactions: [bad], state_root: chain.head.state_root }, proposerKey(chain.params, 1));
    },
  },
  {
    name: 'an EVM transaction with forged stored fields',
    rule: 'tx_invalid',
    height: 1,
    write: async (chain) => {
      const evm = await evmTransfer(alice, 0);
      const b = await validBlock(chain, []);
      const forged = { ...evm, to_address: bob.address, amount: 999_999n, from_address: bob.address };
      return reseal({ ...b, transactions: [forged], state_root: chain.head.state_root }, proposerKey(chain.params, 1));
    },
  },
];

for (const c of crafted) {
  test(`/chain/validate names height ${c.height} and rule ${c.rule} for ${c.name} written into a data dir`, async (t) => {
    const tmp = tempDir();
    t.teardown(tmp.cleanup);
    const params = fixtureParams();
    const { chain, db } = await openFixtureChain(tmp.dir, params);
    const block = await c.write(chain);
    await chain.blocks.commit(block, new Map(), []);
    await db.close();
    saveValidatorKey(tmp.dir, validatorKeys[0]);
    const genesisFile = join(tmp.dir, 'genesis.json');
    writeGenesisFile(genesisFile, params);
    const n = await startTestNode({ dataDir: tmp.dir, genesisFile, blockTimeMs: 600_000 });
    t.teardown(() => n.stop());
    const r = await httpJson(`${n.url}/chain/validate`);
    t.is(r.status, 200, r.text);
    t.is(r.body.valid, false);
    t.is(r.body.first_bad_height, c.height);
    t.is(r.body.rule, c.rule);
    t.regex(r.body.error, new RegExp(`invalid block ${c.height}: ${c.rule}`));
  });
}
