/**
 * The chain handshake with real node processes: a node of another genesis (same chain id) and a node of
 * another chain id dial a running node; both are refused and neither ends up as a peer. Also the testnet
 * generator's fixed interface (nodes.json fields and the port layout), and a fresh generated network
 * going from PoA into DPoS+BFT at its activation height with a validator that starts late.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { genesisIdentity, readGenesisFile } from '../../ts/chain/index.js';
import { generateTestnet } from '../../ts/node/index.js';
import {
  type Running,
  assertAgree,
  assertNoHonestPenalties,
  diagnose,
  freeBasePort,
  heights,
  multiaddrOf,
  startNode,
  stopAll,
  tail,
} from '../helpers/devnet.js';
import { httpJson } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

test('the testnet generator writes nodes.json with the fixed fields and port layout', (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const out = join(tmp.dir, 'net');
  const nodes = generateTestnet({
    validators: 4,
    fullNodes: 2,
    out,
    basePort: 26600,
    chainId: 7120,
    dposBftHeight: 10,
    blockTimeMs: 1000,
  });
  const file = JSON.parse(readFileSync(join(out, 'nodes.json'), 'utf8'));
  t.deepEqual(file, nodes);
  t.is(nodes.length, 6);
  nodes.forEach((n, i) => {
    t.deepEqual(Object.keys(n).sort(), ['api_url', 'data_dir', 'name', 'p2p_port', 'role', 'start', 'validator_address']);
    t.is(n.name, `node${i}`);
    t.is(n.role, i < 4 ? 'validator' : 'full');
    t.is(n.api_url, `http://127.0.0.1:${26600 + i}`);
    t.is(n.p2p_port, 26700 + i);
    t.is(n.data_dir, join(out, `node${i}`));
    if (i < 4) t.regex(n.validator_address ?? '', /^0x[0-9a-f]{40}$/);
    else t.is(n.validator_address, null);
    t.true(n.start.startsWith('node dist/ts/node/main.js '));
    t.true(n.start.includes(`--port ${26600 + i} `));
    t.true(n.start.includes(`--p2p-port ${26700 + i} `));
    t.true(n.start.includes(`--grpc-port ${26800 + i} `), 'gRPC on P+200+i');
    t.true(n.start.includes(`--role ${n.role}`));
    // Every node lists every other one as a static peer.
    const peers = n.start.split(' ')[n.start.split(' ').indexOf('--peers') + 1].split(',');
    t.is(peers.length, 5);
    for (const p of peers) t.regex(p, /^\/ip4\/127\.0\.0\.1\/tcp\/267\d\d\/p2p\/16Uiu2HA\w+$/);
  });
  const genesis = JSON.parse(readFileSync(join(out, 'genesis.json'), 'utf8'));
  t.is(genesis.chain_id, 7120);
});

test('a node of another genesis or another chain id is refused at the handshake', async (t) => {
  t.timeout(120_000);
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const base = await freeBasePort(5);
  // b and c each come with a second node of their own chain (b2, c2), started later: see the end.
  const make = (name: string, i: number, chainId: number, fullNodes: number) =>
    generateTestnet({
      validators: 1,
      fullNodes,
      out: join(tmp.dir, name),
      basePort: base + i,
      chainId,
      dposBftHeight: 10,
      blockTimeMs: 500,
    });
  const [a] = make('a', 0, 7120, 0);
  const sameIdOtherGenesis = make('b', 1, 7120, 1);
  const otherChainId = make('c', 3, 7121, 1);
  const na = startNode(a);
  const procs = [na];
  t.teardown(() => stopAll(procs));
  const peerId = (await waitFor(
    async () => (await httpJson(`${a.api_url}/net/peers`).catch(() => null))?.body.peer_id,
    60_000,
    'node a listening',
  )) as string;
  const target = `/ip4/127.0.0.1/tcp/${a.p2p_port}/p2p/${peerId}`;
  for (const [n, second] of [sameIdOtherGenesis, otherChainId]) {
    // Static peers: a (another chain) and its own chain's second node, not started yet.
    const r = startNode(n, ['--peers', `${target},${multiaddrOf([n, second], 1)}`]);
    procs.push(r);
    await waitFor(
      () =>
        r.logs.join('').includes('peer refused at handshake') &&
        na.logs.join('').split('peer refused at handshake').length > procs.length - 1,
      60_000,
      `${n.data_dir}: refusal logged on both sides`,
    ).catch((err) => {
      t.log(tail(na), tail(r));
      throw err;
    });
    t.is((await httpJson(`${n.api_url}/net/peers`)).body.total, 0);
  }
  t.is((await httpJson(`${a.api_url}/net/peers`)).body.total, 0);
  // Refused peers stay refused: the static peer is not redialled into the peer list. The proof that the
  // redial ran after the refusal: b and c connect to their second nodes, which dial nobody themselves
  // (no static peers), so the connection is b's and c's redial of their static peers.
  for (const [n, second] of [sameIdOtherGenesis, otherChainId]) {
    procs.push(startNode(second, ['--peers', '']));
    await waitFor(
      async () => (await httpJson(`${n.api_url}/net/peers`)).body.total === 1,
      60_000,
      `${n.data_dir}: its static peer of its own chain connected`,
    );
    const peers = (await httpJson(`${n.api_url}/net/peers`)).body.peers as { peer_id: string }[];
    t.false(
      peers.some((p) => p.peer_id === peerId),
      'a is not among its peers',
    );
  }
  t.is((await httpJson(`${a.api_url}/net/peers`)).body.total, 0);
});

test('the network identity commits to the genesis parameters the genesis block does not (validators, activation)', (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const make = (name: string) => {
    generateTestnet({
      validators: 2,
      fullNodes: 0,
      out: join(tmp.dir, name),
      basePort: 26600,
      chainId: 7120,
      dposBftHeight: 10,
      blockTimeMs: 1000,
    });
    return readGenesisFile(join(tmp.dir, name, 'genesis.json'));
  };
  const a = make('a');
  const b = { ...make('b'), genesisTimestamp: a.genesisTimestamp };
  const block = 'ab'.repeat(32); // the same genesis block: same allocation, same second
  t.is(genesisIdentity(a, block), genesisIdentity({ ...a }, block));
  t.not(genesisIdentity(a, block), genesisIdentity(b, block), 'other validators');
  t.not(genesisIdentity(a, block), genesisIdentity({ ...a, activation: { ...a.activation, dposBft: 11 } }, block));
  t.not(genesisIdentity(a, block), genesisIdentity(a, 'cd'.repeat(32)), 'another genesis block');
});

test('a fresh network passes PoA into DPoS+BFT at its activation height, with a validator that starts late', async (t) => {
  t.timeout(180_000);
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const BFT_FROM = 6;
  const nodes = generateTestnet({
    validators: 4,
    fullNodes: 0,
    out: join(tmp.dir, 'net'),
    basePort: await freeBasePort(4),
    chainId: 7120,
    dposBftHeight: BFT_FROM,
    blockTimeMs: 200,
  });
  const urls = nodes.map((n) => n.api_url);
  const running: Running[] = nodes.slice(0, 3).map((n) => startNode(n));
  t.teardown(() => stopAll(running));
  try {
    // Under PoA every authority proposes in turn: the chain waits at the late validator's first slot.
    await waitFor(async () => (await heights(urls.slice(0, 3))).every((h) => h >= 0), 90_000, 'three validators answer');
    running.push(startNode(nodes[3]));
    await waitFor(async () => (await heights(urls)).every((h) => h >= BFT_FROM + 6), 120_000, 'every validator past activation');
  } catch (err) {
    t.log(await diagnose(running));
    throw err;
  }
  await assertAgree(t, urls, BFT_FROM + 6, BFT_FROM);
  const blocks = await Promise.all(
    [BFT_FROM - 1, BFT_FROM].map(async (h) => (await httpJson(`${urls[0]}/chain/blocks/${h}`)).body),
  );
  t.is(blocks[0].consensus, 'PoA');
  t.is(blocks[1].consensus, 'DPoS+BFT');
  t.true(blocks[1].has_justification);
  assertNoHonestPenalties(t, nodes);
});
