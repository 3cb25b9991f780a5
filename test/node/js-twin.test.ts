import test from 'ava';
import { DEV_MNEMONIC, keyPairFromMnemonic, signTransaction } from '../../ts/ledger/index.js';
import { spawnNode } from '../helpers/child-node.js';
import { httpJson } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

test('without the native addon the node runs on the JS twin: says so, produces blocks, accepts a transfer', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  // NATIVE_ADDON_PATH pointing nowhere makes the loader find no addon; NATIVE_CRYPTO=js is the explicit switch.
  const node = await spawnNode(['--data-dir', tmp.dir, '--block-time-ms', '200'], {
    NATIVE_ADDON_PATH: '/nonexistent',
    NATIVE_CRYPTO: 'js',
  });
  t.teardown(() => {
    if (node.proc.exitCode === null) node.proc.kill('SIGKILL');
  });
  const line = node.logs.find((l) => l.includes('crypto backend'));
  t.truthy(line);
  t.regex(line ?? '', /"crypto_backend":"js"/);
  const alice = keyPairFromMnemonic(DEV_MNEMONIC, 0);
  const tx = signTransaction(
    {
      from: alice.address,
      to: keyPairFromMnemonic(DEV_MNEMONIC, 1).address,
      amount: 1n,
      fee: 10_000n,
      nonce: 0n,
      chain_id: 7120,
    },
    alice,
  );
  t.is((await httpJson(`${node.url}/transactions`, { method: 'POST', json: { transaction: tx } })).status, 200);
  const confirmed = await waitFor(
    async () => (await httpJson(`${node.url}/transactions/${tx.txid}`)).body?.status === 'confirmed',
  );
  t.true(confirmed);
  const status = (await httpJson(`${node.url}/native_status`)).body;
  t.is(status.crypto_backend, 'js');
  node.proc.kill('SIGTERM');
  t.is(await node.exited, 0);
});
