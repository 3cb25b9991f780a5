import test from 'ava';
import { DEV_MNEMONIC, keyPairFromMnemonic, signTransaction } from '../../ts/ledger/index.js';
import { replayDataDir, spawnNode } from '../helpers/child-node.js';
import { httpJson } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const senders = [0, 1, 2, 3].map((i) => keyPairFromMnemonic(DEV_MNEMONIC, i));
const to = keyPairFromMnemonic(DEV_MNEMONIC, 9).address;

test('kill -9 while accepting transfers: committed blocks and their transactions survive, chain resumes, state replays', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const args = ['--data-dir', tmp.dir, '--block-time-ms', '100', '--log-level', 'info'];
  const first = await spawnNode(args);
  t.teardown(() => {
    if (first.proc.exitCode === null) first.proc.kill('SIGKILL');
  });
  const nonces = senders.map(() => 0n);
  const accepted: string[] = [];
  // Submit continuously from 4 senders until at least 3 blocks hold transactions, then kill mid-stream.
  let stop = false;
  const pump = (async () => {
    while (!stop) {
      const i = accepted.length % senders.length;
      const tx = signTransaction(
        { from: senders[i].address, to, amount: 1000n, fee: 10_000n, nonce: nonces[i], chain_id: 7120 },
        senders[i],
      );
      try {
        const r = await httpJson(`${first.url}/transactions`, { method: 'POST', json: { transaction: tx } });
        if (r.status === 200) {
          accepted.push(tx.txid);
          nonces[i]++;
        }
      } catch {
        return; // the node is gone
      }
    }
  })();
  const confirmedBeforeKill = await waitFor(
    async () => {
      const seen: { txid: string; height: number }[] = [];
      // 60 of the accepted transactions spread over all of them: a block may hold the first 60 at once (blocks
      // come slower than 100 ms when the pump keeps the node busy), later ones land in later blocks.
      const step = Math.max(1, Math.floor(accepted.length / 60));
      for (const id of accepted.filter((_, i) => i % step === 0).slice(0, 60)) {
        const r = await httpJson(`${first.url}/transactions/${id}`);
        if (r.body?.status === 'confirmed') seen.push({ txid: id, height: r.body.block_index });
      }
      return new Set(seen.map((s) => s.height)).size >= 3 ? seen : null;
    },
    // Generous: on a loaded machine the pump's stream of submissions shares the node's one thread with blocks.
    90_000,
    'transactions in 3 blocks',
  );
  const heightBeforeKill = (await httpJson(`${first.url}/native_status`)).body.sync_info.latest_block_height as number;
  first.proc.kill('SIGKILL');
  stop = true;
  await first.exited;
  await pump;

  const second = await spawnNode(args);
  t.teardown(() => {
    if (second.proc.exitCode === null) second.proc.kill('SIGKILL');
  });
  const resumed = (await httpJson(`${second.url}/native_status`)).body.sync_info.latest_block_height as number;
  t.true(resumed >= heightBeforeKill, `resumed at ${resumed}, had seen ${heightBeforeKill}`);
  for (const { txid, height } of confirmedBeforeKill) {
    const r = await httpJson(`${second.url}/transactions/${txid}`);
    t.is(r.status, 200);
    t.is(r.body.block_index, height);
  }
  // The chain keeps growing after the restart.
  await waitFor(async () => (await httpJson(`${second.url}/native_status`)).body.sync_info.latest_block_height > resumed + 2);
  second.proc.kill('SIGTERM');
  t.is(await second.exited, 0);

  // Replay from genesis in-process: every header, signature and state root checks out.
  const report = await replayDataDir(tmp.dir);
  t.true(report.valid, JSON.stringify(report));
  t.true(report.checked_blocks > heightBeforeKill);
});
