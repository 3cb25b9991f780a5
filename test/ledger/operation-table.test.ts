/** The wire-format table is assembled from the native modules' rows (ts/modules/<name>/operations.ts). */
import test from 'ava';
import { NFT_OPERATIONS, TOKEN_OPERATIONS } from '../../ts/modules/index.js';
import { OPERATION_VARIANTS, decodeOperation } from '../../ts/ledger/operations.js';

test('the wire-format table is the modules rows in the order tokens, staking, nft; Deploy keeps its stateless check', (t) => {
  const names = Object.keys(OPERATION_VARIANTS);
  const tokens = Object.keys(TOKEN_OPERATIONS);
  const nfts = Object.keys(NFT_OPERATIONS);
  t.deepEqual(names.slice(0, tokens.length), tokens);
  t.deepEqual(names.slice(names.length - nfts.length), nfts);
  t.deepEqual(tokens, ['Deploy', 'Transfer', 'Burn', 'Mint', 'Approve', 'TransferFrom']);
  t.throws(
    () => decodeOperation(JSON.stringify({ Deploy: { name: 'T', symbol: 'T', decimals: 0, supply: 10, max_supply: 9 } })),
    {
      message: 'invalid Deploy operation: max_supply must be 0 (uncapped) or at least supply',
    },
  );
  t.is(
    decodeOperation(JSON.stringify({ Deploy: { name: 'T', symbol: 'T', decimals: 0, supply: 10, max_supply: 0 } })).name,
    'Deploy',
  );
});
