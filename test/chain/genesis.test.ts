import test from 'ava';
import { join } from 'node:path';
import { readGenesisFile, writeGenesisFile } from '../../ts/chain/genesis.js';
import type { ChainParams } from '../../ts/chain/params.js';
import { randomKeyPair } from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';
import { tempDir } from '../helpers/util.js';

test('a written genesis file reads back to the same parameters (allocations beyond 2^53 exact)', (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const v = randomKeyPair();
  const params: ChainParams = {
    network: 'testnet',
    chainId: 7120,
    genesisTimestamp: 1_700_000_000,
    activation: { dposBft: 10, evm: 752, rewardV2: 11, tokenomicsV2: 12, nft: 800 },
    validators: [{ address: v.address, public_key: toHex(v.publicKey), name: 'v1' }],
    alloc: new Map([
      [v.address, 31_500_000_000_000_000n],
      [`0x${'ab'.repeat(20)}`, 1n],
    ]),
    evmHardfork: 'prague',
    epochLength: 3600,
  };
  const path = join(tmp.dir, 'genesis.json');
  writeGenesisFile(path, params);
  t.deepEqual(readGenesisFile(path), params);
});
