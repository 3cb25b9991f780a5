import test from 'ava';
import { ethers } from 'ethers';
import { replayDataDir, spawnNode } from '../helpers/child-node.js';
import { compiled } from '../helpers/contracts.js';
import { devKey, ethersWallet, rpc, rpcOk, sendNative, signCall, waitReceipt } from '../helpers/evm.js';
import { httpJson } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const iface = new ethers.Interface(compiled('Box').abi);
/** Storage slot of Box.writes[who] (mapping at slot 2). */
const writesSlot = (who: string) => ethers.keccak256(ethers.concat([ethers.zeroPadValue(who, 32), ethers.toBeHex(2n, 32)]));

interface Sent {
  hash: string;
  value: bigint;
  evm: boolean;
}

test('kill -9 under mixed native + EVM load: receipts, logs, code and storage survive; validateChain replays the EVM', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const args = ['--data-dir', tmp.dir, '--block-time-ms', '100', '--log-level', 'info']; // spawnNode reads the 'API listening' line
  const first = await spawnNode(args);
  t.teardown(() => {
    if (first.proc.exitCode === null) first.proc.kill('SIGKILL');
  });
  const w = ethersWallet(first.url, 0);
  t.teardown(() => w.provider?.destroy());
  const { abi, bytecode } = compiled('Box');
  const deployTx = await w.sendTransaction(await new ethers.ContractFactory(abi, bytecode, w).getDeployTransaction(0n));
  const deployRc = await waitReceipt(first.url, deployTx.hash);
  const box: string = deployRc.contractAddress;

  // Pumps: EVM writes of increasing values from account 0, native transfers from accounts 1 and 2, each sender
  // keeping at most 16 transactions unconfirmed.
  const sent: Sent[] = [];
  let stop = false;
  /** Why a pump stopped before the kill (reported by the wait below instead of a bare timeout). */
  let pumpError: unknown = null;
  const backlog = async (address: string, nonce: number) =>
    nonce - Number(await rpcOk(first.url, 'eth_getTransactionCount', [address, 'latest']));
  const throttle = async (address: string, nonce: number) => {
    if ((await backlog(address, nonce)) >= 16) await waitFor(async () => stop || (await backlog(address, nonce)) < 8, 30_000);
  };
  const evmPump = (async () => {
    let nonce = 1;
    for (let value = 1n; !stop; value++) {
      try {
        await throttle(w.address, nonce);
        const data =
          value % 2n
            ? iface.encodeFunctionData('storeAndPing', [value, ethers.id(`t${value}`)])
            : iface.encodeFunctionData('store', [value]);
        const raw = await signCall(w, box, data, nonce);
        // Listed before it is sent: a submission in flight at the kill may already be durable in the journal
        // (it is answered only after that) and land after the restart.
        const hash = ethers.keccak256(raw);
        sent.push({ hash, value, evm: true });
        const r = await rpc(first.url, 'eth_sendRawTransaction', [raw]);
        if (r.result !== hash) throw new Error(`eth_sendRawTransaction: ${JSON.stringify(r)}`);
        nonce++;
      } catch (err) {
        pumpError ??= err;
        return; // the node is gone (or refused a transaction)
      }
    }
  })();
  const nativePump = (async () => {
    const keys = [devKey(1), devKey(2)];
    const nonces = [0, 0];
    for (let i = 0; !stop; i++) {
      const k = i % 2;
      try {
        await throttle(keys[k].address, nonces[k]);
        const txid = await sendNative(first.url, keys[k], devKey(9).address, 1000n, BigInt(nonces[k]));
        sent.push({ hash: `0x${txid}`, value: 0n, evm: false });
        nonces[k]++;
      } catch (err) {
        pumpError ??= err;
        return;
      }
    }
  })();

  // Collect receipts until 10+ EVM receipts in 3+ blocks, and a block mixing EVM and native transactions.
  const seen = new Map<string, any>();
  await waitFor(
    async () => {
      if (pumpError) throw pumpError;
      for (const s of [...sent]) {
        if (seen.has(s.hash)) continue;
        const r = await rpcOk(first.url, 'eth_getTransactionReceipt', [s.hash]);
        if (r) seen.set(s.hash, r);
      }
      const byBlock = new Map<string, Set<boolean>>();
      for (const s of sent) {
        const r = seen.get(s.hash);
        if (r) byBlock.set(r.blockHash, (byBlock.get(r.blockHash) ?? new Set()).add(s.evm));
      }
      const evmBlocks = [...byBlock.values()].filter((kinds) => kinds.has(true)).length;
      const mixed = [...byBlock.values()].some((kinds) => kinds.size === 2);
      const evmSeen = sent.filter((s) => s.evm && seen.has(s.hash)).length;
      return evmBlocks >= 3 && mixed && evmSeen >= 10;
    },
    40_000,
    '10 EVM receipts in 3 blocks and a block mixing EVM and native transactions',
  );
  const heightBeforeKill = Number(await rpcOk(first.url, 'eth_blockNumber'));
  first.proc.kill('SIGKILL');
  stop = true;
  await first.exited;
  await Promise.all([evmPump, nativePump]);
  // Values increase with the nonce: the last EVM write seen confirmed holds the largest value seen.
  const lastSeenValue = sent.filter((s) => s.evm && seen.has(s.hash)).at(-1)?.value ?? 0n;
  t.true(lastSeenValue > 0n);

  const second = await spawnNode(args);
  t.teardown(() => {
    if (second.proc.exitCode === null) second.proc.kill('SIGKILL');
  });
  t.true(Number(await rpcOk(second.url, 'eth_blockNumber')) >= heightBeforeKill);
  // Transactions accepted but not yet in a block at the kill were journaled and are replayed: let them land
  // before reading the state, so it stops moving under the checks below.
  await waitFor(async () => (await httpJson(`${second.url}/mempool`)).body.size === 0, 30_000, 'replayed transactions included');
  // Every receipt seen before the kill is served identically (status, gas, logs, block, bloom).
  for (const [hash, before] of seen) t.deepEqual(await rpcOk(second.url, 'eth_getTransactionReceipt', [hash]), before, hash);
  t.deepEqual(await rpcOk(second.url, 'eth_getTransactionReceipt', [deployTx.hash]), deployRc);
  t.is(await rpcOk(second.url, 'eth_getCode', [box, 'latest']), compiled('Box').deployedBytecode);

  // Storage matches the last committed write (>= the last one seen), and the write count matches the receipts.
  const confirmed: Sent[] = [];
  const receipts: any[] = [];
  for (const s of sent.filter((x) => x.evm)) {
    const r = await rpcOk(second.url, 'eth_getTransactionReceipt', [s.hash]);
    if (!r) break; // one sender, increasing nonces: nothing after a missing one is committed
    t.is(r.status, '0x1');
    confirmed.push(s);
    receipts.push(r);
  }
  const lastValue = confirmed[confirmed.length - 1].value;
  t.log(
    `${sent.length} sent, ${seen.size} receipts seen before the kill at height ${heightBeforeKill}, ${confirmed.length} EVM writes committed`,
  );
  t.true(lastValue >= lastSeenValue, `${lastValue} >= ${lastSeenValue}`);
  t.is(BigInt(await rpcOk(second.url, 'eth_getStorageAt', [box, '0x0', 'latest'])), lastValue);
  t.is(BigInt(await rpcOk(second.url, 'eth_getStorageAt', [box, writesSlot(w.address), 'latest'])), BigInt(confirmed.length));
  t.is(BigInt(await rpcOk(second.url, 'eth_call', [{ to: box, data: iface.encodeFunctionData('value') }, 'latest'])), lastValue);
  // eth_getLogs serves exactly the committed receipts' logs.
  const logs = await rpcOk<any[]>(second.url, 'eth_getLogs', [{ address: box, fromBlock: deployRc.blockNumber }]);
  t.deepEqual(
    logs,
    receipts.flatMap((r) => r.logs),
  );

  // The EVM keeps executing after the restart.
  const w2 = ethersWallet(second.url, 0);
  t.teardown(() => w2.provider?.destroy());
  const nonce = Number(await rpcOk(second.url, 'eth_getTransactionCount', [w.address, 'pending']));
  const after = await rpcOk(second.url, 'eth_sendRawTransaction', [
    await signCall(w2, box, iface.encodeFunctionData('store', [1_000_000n]), nonce),
  ]);
  t.is((await waitReceipt(second.url, after)).status, '0x1');
  second.proc.kill('SIGTERM');
  t.is(await second.exited, 0);

  // Replay from genesis in-process: signatures, state roots, EVM gas and blooms all re-derive.
  const report = await replayDataDir(tmp.dir);
  t.true(report.valid, JSON.stringify(report));
  t.true(report.checked_blocks > heightBeforeKill);
});
