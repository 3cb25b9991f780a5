/**
 * `--state-sync` with real processes: a 4-validator devnet taking snapshots every few blocks, and a fresh full
 * node that joins from a snapshot its peers offer, reaches the validators' head, answers eth_getBalance as a
 * validator does, and refuses reads below the snapshot height.
 */
import { join } from 'node:path';
import test from 'ava';
import { generateTestnet } from '../../ts/node/index.js';
import { type Running, diagnose, freeBasePort, height, startNode, stopAll, stopNode } from '../helpers/devnet.js';
import { httpJson } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const INTERVAL = 5;

const rpc = async (url: string, method: string, params: unknown[]) =>
  (await httpJson(`${url}/rpc`, { method: 'POST', json: { jsonrpc: '2.0', id: 1, method, params } })).body as {
    result?: string;
    error?: { code: number; message: string };
  };

test('a fresh full node with --state-sync joins at a snapshot, follows the head and answers balances as the validators do', async (t) => {
  t.timeout(300_000);
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const base = await freeBasePort(5);
  const nodes = generateTestnet({
    validators: 4,
    fullNodes: 1,
    out: join(tmp.dir, 'net'),
    basePort: base,
    chainId: 7130,
    dposBftHeight: 3,
    blockTimeMs: 400,
  });
  const validators = nodes.filter((n) => n.role === 'validator');
  const full = nodes.find((n) => n.role === 'full');
  if (!full) throw new Error('no full node generated');
  // The joining node first: with no peer offering a snapshot yet it is still restoring, and answers so.
  const joining = startNode(full, ['--state-sync']);
  const procs: Running[] = [joining];
  t.teardown(() => stopAll(procs));
  const status = async () => (await httpJson(`${full.api_url}/native_status`).catch(() => null))?.body;
  const early = await waitFor(status, 90_000, 'the joining node answers /native_status');
  t.is(early.sync_info.state_sync.phase, 'discovering');
  t.true(early.sync_info.syncing);
  t.is((await httpJson(`${full.api_url}/health`)).status, 200);
  const refused = await rpc(full.api_url, 'eth_getBalance', [validators[1].validator_address, 'latest']);
  t.deepEqual(refused.error, { code: -32000, message: 'node is syncing' });
  const restRefused = await httpJson(`${full.api_url}/accounts/${validators[1].validator_address}`);
  t.is(restRefused.status, 503);
  t.is(restRefused.body.error, 'node is syncing');
  t.is((await fetch(`${full.api_url}/metrics`)).status, 200);

  procs.push(...validators.map((n) => startNode(n, ['--snapshot-interval', String(INTERVAL), '--snapshot-keep', '3'])));
  const v0 = validators[0].api_url;
  const synced = await waitFor(
    async () => {
      const s = await status();
      const earliest = s?.sync_info?.earliest_block_height;
      const latest = s?.sync_info?.latest_block_height;
      return typeof latest === 'number' && earliest > 0 && latest >= (await height(v0)) - 2 ? { earliest, latest } : null;
    },
    240_000,
    'the joining node at the head',
  ).catch(async (err) => {
    t.log(await diagnose(procs));
    throw err;
  });
  t.true(synced.earliest % INTERVAL === 0, `joined at a snapshot height (${synced.earliest})`);
  t.true(synced.earliest >= INTERVAL);
  t.true(joining.logs.join('').includes('state sync: state restored'));

  // The same balance as a validator's at a height both have (balances move every block: rewards).
  const account = validators[1].validator_address as string;
  const at = `0x${synced.latest.toString(16)}`;
  const mine = await rpc(full.api_url, 'eth_getBalance', [account, at]);
  const theirs = await rpc(v0, 'eth_getBalance', [account, at]);
  t.truthy(mine.result, JSON.stringify(mine));
  t.is(mine.result, theirs.result);
  const latest = await rpc(full.api_url, 'eth_getBalance', [account, 'latest']);
  t.truthy(latest.result);

  // Below the snapshot: a clear error naming the earliest height, never a wrong answer.
  const below = await rpc(full.api_url, 'eth_getBalance', [account, `0x${(synced.earliest - 1).toString(16)}`]);
  t.is(below.error?.code, -32000);
  t.is(below.error?.message, `historical state is not available: this node starts at height ${synced.earliest}`);
  const rest = await httpJson(`${full.api_url}/chain/blocks/${synced.earliest - 1}`);
  t.is(rest.status, 404, rest.text);
  t.regex(rest.text, new RegExp(`this node starts at height ${synced.earliest}`));

  // kill -9 and a restart with the same flags: the data dir holds a chain now, which opens and follows the head.
  await stopNode(joining);
  const again = startNode(full, ['--state-sync']);
  procs.push(again);
  await waitFor(
    async () => {
      const s = await status();
      return s?.sync_info?.latest_block_height > synced.latest && s.sync_info.earliest_block_height === synced.earliest;
    },
    120_000,
    'the restarted node follows the head from its snapshot',
  ).catch(async (err) => {
    t.log(await diagnose(procs));
    throw err;
  });
  t.true(again.logs.join('').includes('the data directory already holds a chain'));
});
