import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test, { type ExecutionContext } from 'ava';
import { generateTestnet, type TestnetNode } from '../../ts/node/testnet.js';
import { signTransaction } from '../../ts/ledger/transaction.js';
import { keyPairFromMnemonic } from '../../ts/ledger/keys.js';
import { httpJson } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const REPO = fileURLToPath(new URL('../../..', import.meta.url));
const alice = keyPairFromMnemonic('test test test test test test test test test test test junk', 0);
const bob = keyPairFromMnemonic('test test test test test test test test test test test junk', 1);

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

/** A base port whose API (P+i) and P2P (P+100+i) ports are all free for n nodes. */
async function freeBasePort(n: number): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    // Below Linux's ephemeral range (32768+), where outgoing connections could take a port first.
    const base = 20_000 + Math.floor(Math.random() * 120) * 100;
    const ports = Array.from({ length: n }, (_, i) => [base + i, base + 100 + i]).flat();
    if ((await Promise.all(ports.map(portFree))).every(Boolean)) return base;
  }
  throw new Error('no free port range');
}

interface Running {
  node: TestnetNode;
  proc: ChildProcess;
  logs: string[];
}

/** Start a node with the exact `start` command nodes.json gives (from the repository root). */
function start(node: TestnetNode): Running {
  const argv = node.start.split(' ');
  const proc = spawn(process.execPath, argv.slice(1), {
    cwd: REPO,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NATIVE_LOG_LEVEL: 'info' },
  });
  const logs: string[] = [];
  proc.stdout?.on('data', (d: Buffer) => logs.push(d.toString()));
  proc.stderr?.on('data', (d: Buffer) => logs.push(d.toString()));
  return { node, proc, logs };
}

async function stopAll(nodes: Running[]): Promise<void> {
  await Promise.all(
    nodes.map(
      (r) =>
        new Promise<void>((resolve) => {
          if (r.proc.exitCode !== null || r.proc.signalCode !== null) return resolve();
          r.proc.once('exit', () => resolve());
          r.proc.kill('SIGKILL');
        }),
    ),
  );
}

const height = async (url: string): Promise<number> => {
  try {
    return (await httpJson(`${url}/native_status`)).body.sync_info.latest_block_height as number;
  } catch {
    return -1;
  }
};
const blockHash = async (url: string, h: number): Promise<string> => (await httpJson(`${url}/chain/blocks/${h}`)).body.hash;

async function agreeUpTo(t: ExecutionContext, urls: string[], h: number): Promise<void> {
  for (let i = 1; i <= h; i++) {
    const hashes = await Promise.all(urls.map((u) => blockHash(u, i)));
    t.is(new Set(hashes).size, 1, `height ${i}: ${hashes.join(' ')}`);
  }
}

test('a generated 4-validator network finalizes with BFT, relays transactions, survives kill -9, halts without a quorum, and a late full node syncs', async (t) => {
  t.timeout(480_000); // real processes on a shared 2-core machine: generous, progress is what is asserted
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const base = await freeBasePort(5);
  const nodes = generateTestnet({
    validators: 4,
    fullNodes: 1,
    out: join(tmp.dir, 'net'),
    basePort: base,
    chainId: 7120,
    dposBftHeight: 5,
    blockTimeMs: 300,
  });
  t.is(nodes.length, 5);
  t.deepEqual(
    nodes.map((n) => n.role),
    ['validator', 'validator', 'validator', 'validator', 'full'],
  );
  const running = nodes.slice(0, 4).map(start);
  t.teardown(() => stopAll(running));
  const urls = nodes.slice(0, 4).map((n) => n.api_url);
  const heights = () => Promise.all(urls.map(height));

  // PoA-style rotation before the activation height, Tendermint rounds with 3/4 precommits after it.
  await waitFor(async () => (await heights()).every((h) => h >= 12), 240_000, 'height 12 on all validators');
  await agreeUpTo(t, urls, 12);
  const b3 = (await httpJson(`${urls[0]}/chain/blocks/3`)).body;
  t.is(b3.consensus, 'PoA');
  t.false(b3.has_justification);
  const b8 = (await httpJson(`${urls[0]}/chain/blocks/8`)).body;
  t.is(b8.consensus, 'DPoS+BFT');
  t.true(b8.has_justification);
  await waitFor(async () => (await httpJson(`${urls[0]}/net/peers`)).body.total === 3, 60_000, 'three peers after the handshake');

  // A transfer submitted to one validator is gossiped and included; every node sees it.
  const tx = signTransaction(
    { from: alice.address, to: bob.address, amount: 777n, fee: 10_000n, nonce: 0n, chain_id: 7120 },
    alice,
  );
  const sent = await httpJson(`${urls[1]}/transactions`, { method: 'POST', json: { transaction: tx } });
  t.is(sent.status, 200, sent.text);
  await waitFor(
    async () => {
      const r = await Promise.all(urls.map((u) => httpJson(`${u}/transactions/${tx.txid}`)));
      return r.every((x) => x.status === 200 && x.body.status === 'confirmed');
    },
    240_000,
    'transfer confirmed on all validators',
  );

  // One validator killed: the other three hold 3/4 of the stake and keep finalizing.
  const kill = async (i: number) => {
    running[i].proc.kill('SIGKILL');
    await new Promise((r) => running[i].proc.once('exit', r));
  };
  await kill(2);
  const live = [0, 1, 3];
  const h1 = Math.max(...(await Promise.all(live.map((i) => height(urls[i])))));
  await waitFor(
    async () => (await Promise.all(live.map((i) => height(urls[i])))).every((h) => h >= h1 + 5),
    60_000,
    'progress with 3 of 4',
  );

  // Two killed: no quorum, no block is finalized, nothing diverges.
  await kill(3);
  const stuck = await waitFor(
    async () => {
      const a = await Promise.all([0, 1].map((i) => height(urls[i])));
      await new Promise((r) => setTimeout(r, 1500));
      const b = await Promise.all([0, 1].map((i) => height(urls[i])));
      return a[0] === b[0] && a[1] === b[1] && a[0] === a[1] ? a[0] : null;
    },
    30_000,
    'halt without a quorum',
  );
  await new Promise((r) => setTimeout(r, 2000));
  t.is(await height(urls[0]), stuck, 'no block finalized without a 3/4 quorum');

  // One returns (same keys, same signature state): finalization resumes; the other catches up too.
  running[3] = start(nodes[3]);
  await waitFor(
    async () => (await Promise.all([0, 1, 3].map((i) => height(urls[i])))).every((h) => h >= stuck + 3),
    240_000,
    'resume',
  );
  running[2] = start(nodes[2]);
  const h2 = await height(urls[0]);
  await waitFor(async () => (await heights()).every((h) => h >= h2 + 2), 240_000, 'all four again');
  await agreeUpTo(t, urls, h2 + 2);

  // A full node started from zero syncs to the head, verifies every justification, answers reads alike.
  const full = start(nodes[4]);
  running.push(full);
  const target = await height(urls[0]);
  await waitFor(async () => (await height(nodes[4].api_url)) >= target, 240_000, 'full node synced').catch((err) => {
    t.log(full.logs.join('').split('\n').slice(-40).join('\n'));
    throw err;
  });
  t.is(await blockHash(nodes[4].api_url, target), await blockHash(urls[0], target));
  const bal = async (u: string) => (await httpJson(`${u}/accounts/${bob.address}/balance`)).body.balance;
  t.is(String(await bal(nodes[4].api_url)), String(await bal(urls[0])));
  const v = (await httpJson(`${nodes[4].api_url}/chain/validate`)).body;
  t.true(v.valid, v.error ?? '');
  t.is(v.rule, null);
});

test('a node of another chain is refused at the handshake', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const base = await freeBasePort(2);
  const a = generateTestnet({
    validators: 1,
    fullNodes: 0,
    out: join(tmp.dir, 'a'),
    basePort: base,
    chainId: 7120,
    dposBftHeight: 10,
    blockTimeMs: 500,
  });
  // A second network whose only node dials the first one: same chain id, different genesis.
  const b = generateTestnet({
    validators: 1,
    fullNodes: 0,
    out: join(tmp.dir, 'b'),
    basePort: base + 1,
    chainId: 7120,
    dposBftHeight: 10,
    blockTimeMs: 500,
  });
  const bPeers = a[0].start.split(' ').find((_, i, arr) => arr[i - 1] === '--p2p-port');
  const na = start(a[0]);
  const first = a[0].start;
  t.truthy(first);
  const peerId = (await waitFor(
    async () => (await httpJson(`${a[0].api_url}/net/peers`).catch(() => null))?.body.peer_id,
    30_000,
    'a listening',
  )) as string;
  const nb = start({ ...b[0], start: `${b[0].start} --peers /ip4/127.0.0.1/tcp/${bPeers}/p2p/${peerId}` });
  t.teardown(() => stopAll([na, nb]));
  await waitFor(
    () => na.logs.join('').includes('peer refused at handshake') || nb.logs.join('').includes('peer refused at handshake'),
    30_000,
    'refusal logged',
  );
  t.is((await httpJson(`${a[0].api_url}/net/peers`)).body.total, 0);
  t.is((await httpJson(`${b[0].api_url}/net/peers`)).body.total, 0);
});
