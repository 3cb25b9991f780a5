import test from 'ava';
import { tokenContractAddress } from '../../ts/modules/index.js';
import {
  DEV_MNEMONIC,
  type KeyPair,
  keyPairFromMnemonic,
  type SignedTransaction,
  signTransaction,
  ZERO_ADDRESS,
} from '../../ts/ledger/index.js';
import { replayDataDir, spawnNode } from '../helpers/child-node.js';
import { httpJson } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const [a, b, c, d] = [0, 1, 2, 3].map((i) => keyPairFromMnemonic(DEV_MNEMONIC, i));
const nonces = new Map<string, bigint>();
function sign(k: KeyPair, to: string, amount: bigint, data = '', fee = 10_000n): SignedTransaction {
  const nonce = nonces.get(k.address) ?? 0n;
  nonces.set(k.address, nonce + 1n);
  return signTransaction({ from: k.address, to, amount, fee, nonce, data, chain_id: 7120 }, k);
}
const op = (k: KeyPair, body: unknown, fee = 10_000n) => sign(k, ZERO_ADDRESS, 0n, JSON.stringify(body), fee);

test('kill -9 with token and staking state: committed token balances, stakes and delegations survive, the chain resumes and replays', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const args = ['--data-dir', tmp.dir, '--block-time-ms', '100'];
  const first = await spawnNode(args);
  t.teardown(() => {
    if (first.proc.exitCode === null) first.proc.kill('SIGKILL');
  });
  const send = async (tx: SignedTransaction) => {
    const r = await httpJson(`${first.url}/transactions`, { method: 'POST', json: { transaction: tx } });
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
    return tx.txid;
  };
  const contract = tokenContractAddress(d.address, 0n);
  const setup = [
    op(d, { Deploy: { name: 'Crash', symbol: 'CRS', decimals: 0, supply: 1_000_000, max_supply: 0 } }, 100_000n),
    op(d, { Transfer: { contract, to: c.address, amount: 5_000 } }),
    sign(b, a.address, 600_000_000_000n),
  ];
  for (const tx of setup) await send(tx);
  // Admission judges a registration against committed balances: wait for the funding first.
  const funding = setup[2].txid;
  await waitFor(
    async () => (await httpJson(`${first.url}/transactions/${funding}`)).body?.status === 'confirmed',
    30_000,
    'funding',
  );
  const register = op(a, { RegisterValidator: { name: 'a', stake: 1_500_000_000_000, commission_bps: 300 } });
  await send(register);
  await waitFor(
    async () => (await httpJson(`${first.url}/transactions/${register.txid}`)).body?.status === 'confirmed',
    30_000,
    'registration',
  );
  setup.push(op(c, { Delegate: { validator: a.address, amount: 10_000_000_000 } }));
  await send(setup[setup.length - 1]);
  const last = setup[setup.length - 1].txid;
  await waitFor(async () => (await httpJson(`${first.url}/transactions/${last}`)).body?.status === 'confirmed', 30_000, 'setup');
  // Keep token transfers flowing, and kill -9 in the middle of them.
  let stop = false;
  let sent = 0;
  const pump = (async () => {
    while (!stop) {
      try {
        await send(op(d, { Transfer: { contract, to: b.address, amount: 1 } }));
        sent++;
      } catch {
        return;
      }
    }
  })();
  await waitFor(
    async () => (await httpJson(`${first.url}/tokens/${contract}/balance/${b.address}`)).body?.balance >= 5,
    30_000,
    'transfers',
  );
  const before = (await httpJson(`${first.url}/tokens/${contract}/balance/${b.address}`)).body.balance as number;
  first.proc.kill('SIGKILL');
  stop = true;
  await first.exited;
  await pump;

  const second = await spawnNode(args);
  t.teardown(() => {
    if (second.proc.exitCode === null) second.proc.kill('SIGKILL');
  });
  const get = async (path: string) => (await httpJson(`${second.url}${path}`)).body;
  t.true((await get(`/tokens/${contract}/balance/${b.address}`)).balance >= before, 'committed transfers survive');
  t.is((await get(`/tokens/${contract}/balance/${c.address}`)).balance, 5_000);
  t.is((await get(`/tokens/${contract}`)).owner, d.address);
  const sv = await get('/staking/validators');
  t.true(sv.validators.some((v: any) => v.address === a.address && v.stake === 1_510_000_000_000 && v.commission_bps === 300));
  const dl = await get(`/staking/delegations/${c.address}`);
  t.is(dl.delegations[0].amount, 10_000_000_000);
  const resumed = (await get('/native_status')).sync_info.latest_block_height as number;
  await waitFor(async () => (await get('/native_status')).sync_info.latest_block_height > resumed + 2, 30_000, 'growth');
  second.proc.kill('SIGTERM');
  t.is(await second.exited, 0);
  const report = await replayDataDir(tmp.dir);
  t.true(report.valid, JSON.stringify(report));
  t.log(`${sent} transfers sent around the kill`);
});
