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
    const base = 20_000 + Math.floor(Math.random() * 400) * 100;
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

test('a generated 4-validator network agrees block by block, relays transactions, survives kill -9, and a late full node syncs', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const base = await freeBasePort(5);
  const nodes = generateTestnet({
    validators: 4,
    fullNodes: 1,
    out: join(tmp.dir, 'net'),
    basePort: base,
    chainId: 7120,
    dposBftHeight: 10,
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

  // Every validator takes its turn: the chain grows on all four, identically.
  await waitFor(async () => (await Promise.all(urls.map(height))).every((h) => h >= 12), 90_000, 'height 12 on all validators');
  await agreeUpTo(t, urls, 12);
  const b11 = (await httpJson(`${urls[0]}/chain/blocks/11`)).body;
  t.is(b11.consensus, 'DPoS');
  const peers = (await httpJson(`${urls[0]}/net/peers`)).body;
  t.is(peers.total, 3);

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
    60_000,
    'transfer confirmed on all validators',
  );

  // kill -9 one validator: the chain waits at its turn (PoA has no round skipping), and resumes when it
  // returns and catches up; nothing diverges.
  running[2].proc.kill('SIGKILL');
  await new Promise((r) => running[2].proc.once('exit', r));
  const before = Math.max(...(await Promise.all([0, 1, 3].map((i) => height(urls[i])))));
  running[2] = start(nodes[2]);
  await waitFor(
    async () => (await Promise.all(urls.map(height))).every((h) => h >= before + 6),
    90_000,
    'progress after restart',
  );
  await agreeUpTo(t, urls, before + 6);

  // A full node started from zero syncs to the head and answers reads like a validator.
  const full = start(nodes[4]);
  running.push(full);
  const target = await height(urls[0]);
  await waitFor(async () => (await height(nodes[4].api_url)) >= target, 90_000, 'full node synced');
  t.is(await blockHash(nodes[4].api_url, target), await blockHash(urls[0], target));
  const bal = async (u: string) => (await httpJson(`${u}/accounts/${bob.address}/balance`)).body.balance;
  t.is(String(await bal(nodes[4].api_url)), String(await bal(urls[0])));
  t.false(full.logs.join('').includes('"level":50'));
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
