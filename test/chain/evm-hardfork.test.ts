/**
 * The EVM hardfork as a genesis parameter (issue 28, section 4): `evm_hardfork` in the genesis file (a name, or
 * a schedule of names by activation height), osaka for new dev chains, `--hardfork` on --dev, and a genesis
 * whose hardfork the node cannot run refused at start. Genesis files without the field stay on prague.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import test from 'ava';
import { ethers } from 'ethers';
import { genesisIdentity, readGenesisFile, writeGenesisFile } from '../../ts/chain/genesis.js';
import { evmHardforkAt } from '../../ts/chain/evm-hardfork.js';
import { Chain } from '../../ts/chain/chain.js';
import type { ChainParams } from '../../ts/chain/params.js';
import { openRocksStore } from '../../ts/storage/index.js';
import { ConfigError, parseConfig, saveValidatorKey } from '../../ts/node/index.js';
import { randomKeyPair } from '../../ts/ledger/index.js';
import { toHex } from '../../ts/util/index.js';
import { devKey, ethersProvider, ethersWallet, rpc, rpcOk } from '../helpers/evm.js';
import { httpJson, startTestNode, unstakedDevParams } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';

/** Init code returning CLZ(1) = 255 (EIP-7939, osaka). */
const CLZ_OF_ONE = '0x60011e5f5260205ff3';

function genesisJson(dir: string, fields: Record<string, unknown>): string {
  const file = join(dir, 'genesis.json');
  const v = devKey(0);
  writeFileSync(
    file,
    JSON.stringify({
      chain_id: 7120,
      network: 'dev',
      timestamp: 1_700_000_000,
      validators: [{ address: v.address, public_key: toHex(v.publicKey), name: 'v0' }],
      alloc: { [devKey(1).address]: 1_000_000_000_000 },
      ...fields,
    }),
  );
  return file;
}

test('evm_hardfork: absent is prague (identity unchanged), a name or a schedule by height, anything else refused', (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const absent = readGenesisFile(genesisJson(tmp.dir, {}));
  t.is(absent.evmHardfork, 'prague');
  t.is(evmHardforkAt(absent, 1_000_000), 'prague');
  const explicit = readGenesisFile(genesisJson(tmp.dir, { evm_hardfork: 'prague' }));
  t.is(genesisIdentity(explicit, '00'.repeat(32)), genesisIdentity(absent, '00'.repeat(32)));
  t.is(readGenesisFile(genesisJson(tmp.dir, { evm_hardfork: 'osaka' })).evmHardfork, 'osaka');
  const scheduled = readGenesisFile(genesisJson(tmp.dir, { evm_hardfork: { prague: 0, osaka: 100 } }));
  t.is(evmHardforkAt(scheduled, 0), 'prague');
  t.is(evmHardforkAt(scheduled, 99), 'prague');
  t.is(evmHardforkAt(scheduled, 100), 'osaka');
  t.not(genesisIdentity(scheduled, '00'.repeat(32)), genesisIdentity(absent, '00'.repeat(32)));
  // The schedule survives a write and a read (private networks write their genesis with writeGenesisFile).
  writeGenesisFile(join(tmp.dir, 'again.json'), scheduled);
  t.is(evmHardforkAt(readGenesisFile(join(tmp.dir, 'again.json')), 100), 'osaka');
  const allowed = /allowed: london, paris, shanghai, cancun, prague, osaka/;
  for (const bad of ['berlin', 'istanbul', 'amsterdam', 'Osaka ', 7, { berlin: 0 }, { prague: 5 }, { osaka: 0, prague: 10 }]) {
    const err = t.throws(() => readGenesisFile(genesisJson(tmp.dir, { evm_hardfork: bad })));
    t.regex(err?.message ?? '', /evm_hardfork/, JSON.stringify(bad));
  }
  t.regex(t.throws(() => readGenesisFile(genesisJson(tmp.dir, { evm_hardfork: 'berlin' })))?.message ?? '', allowed);
});

test('--hardfork (dev only), --dev-accounts and --dev-balance parse; a bad hardfork names the allowed values', (t) => {
  t.is(parseConfig(['--dev'], {}).hardfork, undefined);
  t.is(parseConfig(['--dev', '--hardfork', 'cancun'], {}).hardfork, 'cancun');
  const bad = t.throws(() => parseConfig(['--dev', '--hardfork', 'berlin'], {}), { instanceOf: ConfigError });
  t.regex(bad?.message ?? '', /london, paris, shanghai, cancun, prague, osaka/);
  t.throws(() => parseConfig(['--network', 'testnet', '--hardfork', 'osaka'], {}), { instanceOf: ConfigError });
  t.is(parseConfig(['--dev'], {}).devAccounts, 10);
  t.is(parseConfig(['--dev', '--dev-accounts', '3'], {}).devAccounts, 3);
  t.is(parseConfig(['--dev', '--dev-balance', '5'], {}).devBalanceCoins, 5n);
  t.throws(() => parseConfig(['--dev', '--dev-accounts', '0'], {}), { instanceOf: ConfigError });
  t.throws(() => parseConfig(['--network', 'testnet', '--dev-accounts', '3'], {}), { instanceOf: ConfigError });
  t.true(parseConfig(['--dev', '--allow-unlimited-contract-size'], {}).allowUnlimitedContractSize);
  t.throws(() => parseConfig(['--network', 'testnet', '--allow-unlimited-contract-size'], {}), { instanceOf: ConfigError });
});

test('a new dev chain runs osaka (CLZ works, through ethers); --hardfork prague does not have it', async (t) => {
  const osaka = await startTestNode({ blockTimeMs: 0 });
  t.teardown(() => osaka.stop());
  t.is(osaka.node.ctx.chain.params.evmHardfork, 'osaka');
  t.is(BigInt(await ethersProvider(osaka.url).call({ data: CLZ_OF_ONE })), 255n);
  const prague = await startTestNode({ blockTimeMs: 0, hardfork: 'prague' });
  t.teardown(() => prague.stop());
  const r = await rpc(prague.url, 'eth_call', [{ data: CLZ_OF_ONE }, 'latest']);
  t.is(r.error?.code, -32000);
  t.regex(r.error?.message ?? '', /invalid opcode/);
});

test('a dev data dir keeps the hardfork it was created with; --dev-accounts and --dev-balance fund the accounts', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const first = await startTestNode({
    blockTimeMs: 0,
    hardfork: 'cancun',
    dataDir: tmp.dir,
    devAccounts: 3,
    devBalanceCoins: 7n,
  });
  t.is(first.node.ctx.chain.params.evmHardfork, 'cancun');
  const accounts = await rpcOk<string[]>(first.url, 'eth_accounts');
  t.is(accounts.length, 3);
  t.is(BigInt(await rpcOk(first.url, 'eth_getBalance', [accounts[2], 'latest'])), ethers.parseEther('7'));
  t.is(await rpcOk(first.url, 'eth_getBalance', [devKey(3).address, 'latest']), '0x0');
  await first.node.stop();
  // Restarted without the flag: still cancun (the default for new chains would change its blocks' meaning).
  const again = await startTestNode({ blockTimeMs: 0, dataDir: tmp.dir });
  t.teardown(() => again.node.stop());
  t.is(again.node.ctx.chain.params.evmHardfork, 'cancun');
  // Another hardfork for an existing dev chain is refused with what to do instead.
  await again.node.stop();
  const err = await t.throwsAsync(startTestNode({ blockTimeMs: 0, dataDir: tmp.dir, hardfork: 'osaka' }));
  t.regex(err?.message ?? '', /cancun/);
});

test('a scheduled hardfork change takes effect at its height, and the chain replays valid', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const key = randomKeyPair();
  const dataDir = join(tmp.dir, 'data');
  saveValidatorKey(dataDir, key);
  const params: ChainParams = {
    network: 'dev',
    chainId: 7120,
    genesisTimestamp: Math.floor(Date.now() / 1000),
    activation: { dposBft: 0, evm: 0, rewardV2: 0, tokenomicsV2: 0, nft: 0 },
    validators: [{ address: key.address, public_key: toHex(key.publicKey), name: 'v0' }],
    alloc: new Map([[devKey(0).address, 1_000_000_000_000n]]),
    evmHardfork: 'prague',
    evmHardforkSchedule: [{ height: 3, hardfork: 'osaka' }],
    epochLength: 3600,
  };
  const genesisFile = join(tmp.dir, 'genesis.json');
  writeGenesisFile(genesisFile, params);
  const n = await startTestNode({ blockTimeMs: 0, genesisFile, dataDir });
  t.teardown(() => n.node.stop());
  const provider = ethersProvider(n.url);
  await rpcOk(n.url, 'hardhat_mine', ['0x2']);
  // Block 2 is prague: no CLZ at latest; the next block (pending) is osaka.
  t.regex((await rpc(n.url, 'eth_call', [{ data: CLZ_OF_ONE }, 'latest'])).error?.message ?? '', /invalid opcode/);
  t.is(BigInt(await provider.call({ data: CLZ_OF_ONE, blockTag: 'pending' })), 255n);
  // A creation whose init code runs CLZ succeeds in block 3 (in a prague block it would fail).
  const w = ethersWallet(n.url, 0, provider);
  // An explicit gas limit: an estimate at `latest` runs on block 2's header, still prague (geth's rule too).
  const receipt = await (await w.sendTransaction({ data: CLZ_OF_ONE, gasLimit: 100_000n })).wait();
  t.is(receipt?.blockNumber, 3);
  t.is(receipt?.status, 1);
  t.is(BigInt(await provider.call({ data: CLZ_OF_ONE })), 255n);
  t.true((await httpJson(`${n.url}/chain/validate`)).body.valid);
});

test('a genesis whose hardfork the node cannot run is refused at start, naming the allowed values', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const genesisFile = genesisJson(tmp.dir, { evm_hardfork: 'berlin' });
  const err = await t.throwsAsync(startTestNode({ blockTimeMs: 0, genesisFile }));
  t.regex(err?.message ?? '', /evm_hardfork "berlin" .*allowed: london, paris, shanghai, cancun, prague, osaka/);
});

test('--allow-unlimited-contract-size deploys a contract above 24 KiB; without it the limit holds', async (t) => {
  // Init code returning 30,000 zero bytes as the runtime code (above EIP-170's 24,576).
  const BIG_RUNTIME = '0x6175305ff3';
  const limited = await startTestNode({ blockTimeMs: 0 });
  t.teardown(() => limited.stop());
  const refused = await rpc(limited.url, 'eth_estimateGas', [{ from: devKey(1).address, data: BIG_RUNTIME }]);
  t.regex(refused.error?.message ?? '', /max code size exceeded/);
  const n = await startTestNode({ blockTimeMs: 0, allowUnlimitedContractSize: true });
  t.teardown(() => n.stop());
  const w = ethersWallet(n.url, 1);
  const receipt = await (await w.sendTransaction({ data: BIG_RUNTIME })).wait();
  t.is(receipt?.status, 1);
  t.is(((await w.provider?.getCode(receipt?.contractAddress ?? '')) ?? '').length, 2 + 60_000);
  t.true((await httpJson(`${n.url}/chain/validate`)).body.valid);
});

test('on osaka a transaction gas limit above 2^24 is refused (EIP-7825) and estimates stop at the cap', async (t) => {
  const n = await startTestNode({ blockTimeMs: 0 });
  t.teardown(() => n.stop());
  const w = ethersWallet(n.url, 2);
  const err = await t.throwsAsync(w.sendTransaction({ to: devKey(3).address, value: 1n, gasLimit: 16_777_217n }));
  t.regex(err?.message ?? '', /transaction gas limit too high/);
  // Memory expanded to 4 MiB (~34M gas): the estimate fails at the cap, not at the 30M block limit.
  const big = await rpc(n.url, 'eth_estimateGas', [{ from: w.address, data: '0x6240000051' }]);
  t.is(big.error?.message, 'gas required exceeds allowance (16777216)');
});

test('a dev data dir made before the genesis record (prague, ten unstaked accounts) opens as it was and replays valid', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const key = randomKeyPair();
  saveValidatorKey(tmp.dir, key);
  // The dev genesis of that time, written by the chain itself.
  const legacy = unstakedDevParams(key, 'prague');
  const db = await openRocksStore(join(tmp.dir, 'db'));
  await new Chain(legacy, db, 1000).open();
  await db.close();
  const n = await startTestNode({ blockTimeMs: 0, dataDir: tmp.dir, devAccounts: 3, devBalanceCoins: 1n });
  t.teardown(() => n.node.stop());
  t.is(n.node.ctx.chain.params.evmHardfork, 'prague');
  t.is(n.node.ctx.chain.params.validators[0].stake, undefined);
  await rpcOk(n.url, 'hardhat_mine', ['0x2']);
  t.true((await httpJson(`${n.url}/chain/validate`)).body.valid);
  t.is(BigInt(await rpcOk(n.url, 'eth_getBalance', [devKey(9).address, 'latest'])), ethers.parseEther('10000'));
});

test('--gas-limit sets the dev chain block gas limit: block headers, GASLIMIT, admission and fee history', async (t) => {
  t.is(parseConfig(['--dev', '--gas-limit', '100000'], {}).gasLimit, 100_000n);
  t.throws(() => parseConfig(['--dev', '--gas-limit', '20000'], {}), { instanceOf: ConfigError });
  t.throws(() => parseConfig(['--network', 'testnet', '--gas-limit', '100000'], {}), { instanceOf: ConfigError });
  const n = await startTestNode({ blockTimeMs: 0, gasLimit: 100_000n });
  t.teardown(() => n.stop());
  const provider = ethersProvider(n.url);
  // GASLIMIT (0x45) returned by init code.
  t.is(BigInt(await provider.call({ data: '0x455f5260205ff3' })), 100_000n);
  const w = ethersWallet(n.url, 1, provider);
  const err = await t.throwsAsync(w.sendTransaction({ to: devKey(2).address, value: 1n, gasLimit: 100_001n }));
  t.regex(err?.message ?? '', /exceeds block gas limit/);
  const receipt = await (await w.sendTransaction({ to: devKey(2).address, value: 1n })).wait();
  const block = await provider.getBlock(receipt?.blockNumber ?? 0);
  t.is(block?.gasLimit, 100_000n);
  const history = await rpcOk(n.url, 'eth_feeHistory', ['0x1', 'latest', []]);
  t.is(history.gasUsedRatio[0], 21_000 / 100_000);
  t.true((await httpJson(`${n.url}/chain/validate`)).body.valid);
});
