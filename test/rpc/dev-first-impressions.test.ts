/**
 * Small first-impression fixes (issue 28, section 6): tracing by the native txid as the node prints it, genesis
 * validators as staking validators on new dev chains, the dev chain's terminal banner.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { DEV_MNEMONIC, privateKeyHex, BASE_PER_COIN } from '../../ts/ledger/index.js';
import { devKey, ethersWallet, rpc, rpcOk, sendNative } from '../helpers/evm.js';
import { Sender } from '../explorer/native-fixture.js';
import { httpJson, startTestNode } from '../helpers/node.js';
import { spawnNode } from '../helpers/child-node.js';
import { freeBasePort } from '../helpers/devnet.js';
import { tempDir, waitFor } from '../helpers/util.js';

const MAIN = fileURLToPath(new URL('../../ts/node/main.js', import.meta.url));

test('native_traceTransaction and debug_traceTransaction take the txid with or without 0x; malformed ids are -32602', async (t) => {
  const n = await startTestNode({ blockTimeMs: 0 });
  t.teardown(() => n.stop());
  const txid = await sendNative(n.url, devKey(1), devKey(2).address, 1000n, 0n);
  t.regex(txid, /^[0-9a-f]{64}$/);
  await waitFor(async () => (await rpcOk(n.url, 'eth_getTransactionReceipt', [`0x${txid}`])) !== null, 30_000, 'mined');
  const bare = await rpcOk(n.url, 'native_traceTransaction', [txid]);
  t.deepEqual(await rpcOk(n.url, 'native_traceTransaction', [`0x${txid}`]), bare);
  t.is(bare.txid, txid);
  const w = ethersWallet(n.url, 3);
  const receipt = await (await w.sendTransaction({ to: devKey(4).address, value: 1n })).wait();
  const hash = receipt?.hash as string;
  const traced = await rpcOk(n.url, 'debug_traceTransaction', [hash.slice(2), { tracer: 'callTracer' }]);
  t.deepEqual(await rpcOk(n.url, 'debug_traceTransaction', [hash, { tracer: 'callTracer' }]), traced);
  for (const bad of ['0x12', txid.slice(2), `0x${txid}00`, `${txid.slice(0, 63)}g`, 42]) {
    const r = await rpc(n.url, 'native_traceTransaction', [bad]);
    t.is(r.error?.code, -32602, String(bad));
    t.is((await rpc(n.url, 'debug_traceTransaction', [bad])).error?.code, -32602, String(bad));
  }
});

test('a new dev chain: its genesis validator is a staking validator (self-delegation); Delegate and Redelegate to it work', async (t) => {
  // Dev accounts with enough coins for a second validator's minimum self-stake (15,000 coins).
  const n = await startTestNode({ blockTimeMs: 0, devBalanceCoins: 100_000n });
  t.teardown(() => n.stop());
  const validator = n.node.ctx.validatorKey?.address as string;
  const listed = (await httpJson(`${n.url}/staking/validators`)).body;
  t.true(JSON.stringify(listed).toLowerCase().includes(validator), JSON.stringify(listed));
  const s = new Sender(n.url);
  const ok = async (txid: string) => {
    const receipt = await rpcOk(n.url, 'eth_getTransactionReceipt', [`0x${txid}`]);
    t.is(receipt?.status, '0x1', JSON.stringify(receipt));
  };
  await ok(await s.op(devKey(6), { Delegate: { validator, amount: 1_000n * BASE_PER_COIN } }));
  await ok(
    await s.op(devKey(7), { RegisterValidator: { name: 'second', stake: 20_000n * BASE_PER_COIN, commission_bps: 500n } }),
  );
  await ok(await s.op(devKey(8), { Delegate: { validator: devKey(7).address, amount: 500n * BASE_PER_COIN } }));
  await ok(
    await s.op(devKey(8), {
      Redelegate: { from_validator: devKey(7).address, to_validator: validator, amount: 100n * BASE_PER_COIN },
    }),
  );
  const delegations = JSON.stringify((await httpJson(`${n.url}/staking/delegations/${devKey(8).address}`)).body).toLowerCase();
  t.true(delegations.includes(validator), delegations);
  t.true((await httpJson(`${n.url}/chain/validate`)).body.valid);
});

test('--dev on a terminal prints the funded accounts with their private keys, the mnemonic, the chain id and the URL; JSON logs stay JSON', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const port = await freeBasePort(1);
  const cmd = `${process.execPath} ${MAIN} --dev --port ${port} --data-dir ${tmp.dir} --block-time-ms 0 --dev-accounts 3 --grpc-port off`;
  // `script` gives the node a terminal (stdout.isTTY), as a developer's shell does.
  const tty = spawn('script', ['-qfec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let text = '';
  tty.stdout.on('data', (d: Buffer) => {
    text += d.toString();
  });
  t.teardown(() => tty.kill('SIGKILL'));
  await waitFor(() => text.includes('Listening on'), 90_000, 'the banner');
  const k2 = devKey(2);
  t.true(text.includes(k2.address), text);
  t.true(text.includes(`0x${privateKeyHex(k2)}`), text);
  t.false(text.includes(devKey(3).address), 'three accounts only');
  t.true(text.includes(DEV_MNEMONIC));
  t.true(text.includes('Chain ID: 7120'));
  t.true(text.includes(`http://127.0.0.1:${port}`));
  t.true(text.includes('osaka'));
  await rpcOk(`http://127.0.0.1:${port}`, 'eth_chainId');
  tty.kill('SIGINT');
  // Not a terminal: every line of stdout is a JSON log line, as before.
  const piped = await spawnNode(['--data-dir', join(tmp.dir, 'piped'), '--block-time-ms', '0']);
  t.teardown(() => piped.proc.kill('SIGKILL'));
  for (const line of piped.logs.filter((l) => l.trim() !== '')) t.notThrows(() => JSON.parse(line), line);
  t.false(piped.logs.join('\n').includes(DEV_MNEMONIC));
});
