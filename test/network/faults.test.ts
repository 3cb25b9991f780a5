/**
 * The network's liveness under faults, with real node processes on 127.0.0.1 (helpers/fault-network.ts):
 * finality with four validators, a validator killed and restarted, two killed (the network halts and resumes
 * when one returns), and a late full node syncing 500 prebuilt blocks. Each test has a network of its own.
 */
import test from 'ava';
import { ethers } from 'ethers';
import { signTransaction } from '../../ts/ledger/index.js';
import { assertAgree, height, heights } from '../helpers/devnet.js';
import { devKey, rpcOk } from '../helpers/evm.js';
import { BFT_FROM, CHAIN_ID, faultTests } from '../helpers/fault-network.js';
import { httpJson } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';

const faultTest = faultTests(test);
/** Enough for PoA heights 1-4, BFT from 5, the token of heights 20-21 and native transfers (every 7th block). */
const PREBUILT = 25;
/** The full node's sync has hundreds of real blocks to fetch and verify. */
const PREBUILT_SYNC = 500;

faultTest(
  'four validators finalize: one hash per height on every node, certificates on BFT heights, transactions relayed',
  { prebuilt: PREBUILT, timeoutMs: 120_000 },
  async (t, net) => {
    const { urls } = net;
    const h = await net.minHeight([0, 1, 2, 3]);
    await assertAgree(t, net.live([0, 1, 2, 3]), h, BFT_FROM);
    const poa = (await httpJson(`${urls[0]}/chain/blocks/3`)).body;
    t.is(poa.consensus, 'PoA');
    t.false(poa.has_justification);
    const bft = (await httpJson(`${urls[0]}/chain/blocks/${h}`)).body;
    t.is(bft.consensus, 'DPoS+BFT');
    t.true(bft.has_justification);
    t.deepEqual(bft.evidence, []);
    // The signers of a certificate come from the next block, the same on every node.
    const signers = await Promise.all(
      net.live([0, 1, 2, 3]).map(async (u) => (await httpJson(`${u}/chain/blocks/${h - 1}/signers`)).body),
    );
    t.is(signers[0].source, 'last_commit');
    t.true(signers[0].signers.length >= 3);
    for (const s of signers) t.deepEqual(s, signers[0]);
    await waitFor(async () => (await httpJson(`${urls[0]}/net/peers`)).body.total === 3, 60_000, 'three peers');
    t.is(await rpcOk(urls[0], 'net_peerCount'), '0x3');

    const status = await rpcOk(urls[0], 'native_getBftStatus');
    t.is(status.consensus, 'DPoS+BFT');
    t.is(typeof status.current_view, 'number');
    t.true(status.current_view > h);
    t.regex(status.current_leader, /^0x[0-9a-f]{40}$/);
    const fin = await rpcOk(urls[0], 'native_getFinalizedHeight');
    t.is(fin.blocks_behind_finality, 0);
    const finalized = await rpcOk(urls[0], 'eth_getBlockByNumber', ['finalized', false]);
    t.true(Number(finalized.number) >= h);
    const ns = (await httpJson(`${urls[0]}/native_status`)).body;
    t.is(ns.consensus_state.phase, 'DPoS+BFT');
    t.true(ns.consensus_state.validator);
    t.is(ns.sync_info.peers, 3);
    t.false(ns.sync_info.catching_up);
    const metrics = (await httpJson(`${urls[0]}/metrics`)).text;
    for (const m of ['native_p2p_peers 3', 'native_bft_round ', 'native_finality_lag_blocks 0', 'native_sync_catching_up 0'])
      t.true(metrics.includes(m), m);

    // A transfer submitted to one validator is gossiped, included, and seen by all.
    const [alice, bob] = [devKey(0), devKey(1)];
    const nonce = BigInt(net.prebuilt.transfers);
    const tx = signTransaction(
      { from: alice.address, to: bob.address, amount: 777n, fee: 10_000n, nonce, chain_id: CHAIN_ID },
      alice,
    );
    const sent = await httpJson(`${urls[1]}/transactions`, { method: 'POST', json: { transaction: tx } });
    t.is(sent.status, 200, sent.text);
    await waitFor(
      async () => {
        const r = await Promise.all(net.live([0, 1, 2, 3]).map((u) => httpJson(`${u}/transactions/${tx.txid}`)));
        return r.every((x) => x.status === 200 && x.body.status === 'confirmed');
      },
      60_000,
      'transfer confirmed on all validators',
    );
  },
);

faultTest(
  'one validator killed: the other three keep finalizing; restarted, it catches up and follows',
  { prebuilt: PREBUILT, timeoutMs: 180_000 },
  async (t, net) => {
    await net.kill(2);
    const h1 = await net.minHeight([0, 1, 3]);
    await net.reach([0, 1, 3], h1 + 5, 60_000, 'progress with 3 of 4');
    net.start(2);
    const target = await net.minHeight([0, 1, 3]);
    await net.reach([2], target + 2, 90_000, 'the restarted validator catches up and follows');
    await net.reach([0, 1, 3], target + 2, 30_000, 'the others keep going');
    await assertAgree(t, net.live([0, 1, 2, 3]), target + 2, BFT_FROM);
  },
);

faultTest(
  'two validators killed: no block is finalized until one of them returns, and nothing diverges',
  { prebuilt: PREBUILT, timeoutMs: 180_000 },
  async (t, net) => {
    await Promise.all([net.kill(2), net.kill(3)]);
    // Both live validators prevoted at the height after their heads, which neither killed validator
    // precommitted before it died: with a quorum it would end now.
    const stuck = await net.prevotedAt([0, 1], [2, 3], 60_000, 'the two live validators prevote at one height');
    t.deepEqual(await heights(net.live([0, 1])), [stuck - 1, stuck - 1]);
    await assertAgree(t, net.live([0, 1]), stuck - 1, BFT_FROM);
    net.start(3);
    await net.reach([0, 1, 3], stuck + 3, 90_000, 'finality resumes with 3 of 4');
    await assertAgree(t, net.live([0, 1, 3]), stuck + 3, BFT_FROM);
    // The certificate that ended it holds a precommit node 3 signed after its restart: the two alone
    // finalized nothing.
    const signers = await net.signersOf(stuck);
    t.true(signers.length >= 3, `${signers.length} signers`);
    t.true(signers.includes(net.nodes[3].validator_address as string), 'node 3 is in the certificate of the stuck height');
    t.false(signers.includes(net.nodes[2].validator_address as string), 'node 2, still down, is not');
  },
);

faultTest(
  'a full node started from zero after 500 blocks syncs to the head and answers like a validator',
  { prebuilt: PREBUILT_SYNC, timeoutMs: 180_000 },
  async (t, net) => {
    const { urls, prebuilt } = net;
    const target = await height(urls[0]);
    t.true(target >= PREBUILT_SYNC);
    net.start(4);
    await net.reach([4], target, 150_000, 'the full node syncs');
    await waitFor(async () => !(await httpJson(`${urls[4]}/native_status`)).body.sync_info.catching_up, 30_000, 'caught up');
    const ns = (await httpJson(`${urls[4]}/native_status`)).body;
    t.false(ns.consensus_state.validator);
    t.true(ns.sync_info.blocks_imported >= target);
    for (const h of [1, 4, 20, 21, 250, PREBUILT_SYNC, target]) {
      const [v, f] = await Promise.all([urls[0], urls[4]].map(async (u) => (await httpJson(`${u}/chain/blocks/${h}`)).body));
      t.deepEqual(f, v, `/chain/blocks/${h}`);
    }
    const token = prebuilt.token;
    for (const who of [devKey(0).address, devKey(1).address, devKey(2).address, token]) {
      const [v, f] = await Promise.all([urls[0], urls[4]].map((u) => rpcOk(u, 'eth_getBalance', [who, 'latest'])));
      t.is(f, v, `eth_getBalance ${who}`);
    }
    const filter = { fromBlock: '0x0', toBlock: ethers.toQuantity(PREBUILT_SYNC), address: token };
    const [vLogs, fLogs] = await Promise.all([urls[0], urls[4]].map((u) => rpcOk(u, 'eth_getLogs', [filter])));
    t.is(vLogs.length, 2, 'the Token constructor and a transfer logged Transfer');
    t.deepEqual(fLogs, vLogs);
    const v = (await httpJson(`${urls[4]}/chain/validate`)).body;
    t.true(v.valid, v.error ?? '');
    // It follows the head afterwards, and a write sent to it reaches the validators.
    const [alice, bob] = [devKey(0), devKey(1)];
    const nonce = BigInt(prebuilt.transfers);
    const tx = signTransaction(
      { from: alice.address, to: bob.address, amount: 1n, fee: 10_000n, nonce, chain_id: CHAIN_ID },
      alice,
    );
    t.is((await httpJson(`${urls[4]}/transactions`, { method: 'POST', json: { transaction: tx } })).status, 200);
    await waitFor(
      async () => (await httpJson(`${urls[4]}/transactions/${tx.txid}`)).body.status === 'confirmed',
      60_000,
      'a transfer sent to the full node is included',
    );
  },
);
