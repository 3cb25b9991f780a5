import test from 'ava';
import { copyFileSync, mkdirSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { ethers } from 'ethers';
import { nodeChainReader } from '../../ts/services/index.js';
import { creationKey, metaKey, openRocksStore } from '../../ts/storage/index.js';
import { u64be } from '../../ts/util/index.js';
import { contractFromFiles } from '../../ts/verify/metadata.js';
import {
  CompilationLimitError,
  CompilePool,
  type CompilePoolOptions,
  CompilerNotAvailableError,
  VerificationService,
  VerificationStore,
} from '../../ts/verify/index.js';
import { ethersProvider, ethersWallet, rpcOk } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir } from '../helpers/util.js';
import { CONTRACTS_DIR, build, deploy, filesOf, fixture, postVerify } from '../helpers/verify.js';

const require = createRequire(import.meta.url);
const BOX = fixture('Box.sol', CONTRACTS_DIR);
const box = () => build({ 'contracts/Box.sol': BOX }, 'contracts/Box.sol', 'Box');

let n: TestNode;
let address: string;
test.before(async () => {
  n = await startTestNode();
  const provider = ethersProvider(n.url);
  try {
    address = (await deploy(ethersWallet(n.url, 0, provider), box(), [3n])).address;
  } finally {
    provider.destroy();
  }
});
test.after.always(() => n?.stop());

/** A service on the test node's chain with its own store and compile pool (limits and compiler directory under test). */
async function service(t: { teardown(fn: () => Promise<void> | void): void }, pool: CompilePoolOptions, solcDir?: string) {
  const tmp = tempDir();
  const db = await openRocksStore(join(tmp.dir, 'db'));
  const svc = new VerificationService({
    chains: new Map([[7120, nodeChainReader(n.node.ctx)]]),
    store: new VerificationStore(db),
    compiler: new CompilePool(pool),
    solcDir,
  });
  t.teardown(async () => {
    await svc.close();
    await db.close();
    tmp.cleanup();
  });
  return svc;
}

const withVersion = (metadata: string, version: string): string => {
  const m = JSON.parse(metadata);
  m.compiler.version = version;
  return JSON.stringify(m);
};

test('time limit: a compilation past it is stopped (its worker terminated) with a 500 naming the limit', async (t) => {
  const svc = await service(t, { timeoutMs: 1 });
  const err = await t.throwsAsync(svc.verify(7120, address.toLowerCase(), contractFromFiles(filesOf(box()))), {
    instanceOf: CompilationLimitError,
  });
  t.is(err!.httpStatus, 500);
  t.is(err!.message, 'compilation stopped: it ran past the time limit of 1ms');
  t.is(svc.compilations().inFlight, 0);
});

test('memory limit: a compilation that outgrows it is stopped with a 500 naming the limit', async (t) => {
  const svc = await service(t, { memoryMb: 16 });
  const err = await t.throwsAsync(svc.verify(7120, address.toLowerCase(), contractFromFiles(filesOf(box()))), {
    instanceOf: CompilationLimitError,
  });
  t.is(err!.httpStatus, 500);
  t.is(err!.message, 'compilation stopped: it used more than the memory limit of 16 MB');
});

test('compiler versions: a missing one is named with how to add it; --solc-dir files are loaded and their version checked', async (t) => {
  const b = box();
  // Over HTTP on the node: 500 naming the version, the file and the flag.
  const r = await postVerify(n.url, {
    address,
    chain: '7120',
    files: { ...filesOf(b), 'metadata.json': withVersion(b.metadata, '0.8.20+commit.a1b79de6') },
  });
  t.is(r.status, 500);
  t.is(
    r.body.error,
    'compiler 0.8.20+commit.a1b79de6 is not available: this verifier has solc 0.8.37 built in; to add it, download soljson-v0.8.20+commit.a1b79de6.js from https://binaries.soliditylang.org/bin/ into a directory and start the verifier with --solc-dir <that directory>',
  );

  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  const dir = join(tmp.dir, 'solc');
  mkdirSync(dir);
  const soljson = require.resolve('solc/soljson.js');
  // A file named for another version is loaded, and refused for what it is.
  symlinkSync(soljson, join(dir, 'soljson-v0.8.99+commit.deadbeef.js'));
  copyFileSync(soljson, join(dir, 'soljson-v0.8.37+commit.f401782d.js'));
  const svc = await service(t, {}, dir);
  const mislabeled = contractFromFiles({ ...filesOf(b), 'metadata.json': withVersion(b.metadata, '0.8.99+commit.deadbeef') });
  const err = await t.throwsAsync(svc.verify(7120, address.toLowerCase(), mislabeled), { instanceOf: CompilerNotAvailableError });
  t.is(
    err!.message,
    `compiler 0.8.99+commit.deadbeef is not available: the file ${join(dir, 'soljson-v0.8.99+commit.deadbeef.js')} is solc 0.8.37+commit.f401782d`,
  );
  const missing = contractFromFiles({ ...filesOf(b), 'metadata.json': withVersion(b.metadata, '0.8.21+commit.d9974bed') });
  const err2 = await t.throwsAsync(svc.verify(7120, address.toLowerCase(), missing), { instanceOf: CompilerNotAvailableError });
  t.regex(
    err2!.message,
    new RegExp(`${dir} has no soljson-v0\\.8\\.21\\+commit\\.d9974bed\\.js; to add it, add soljson-v0\\.8\\.21`),
  );
  // The directory's file for the exact version compiles.
  const { record } = await svc.verify(7120, address.toLowerCase(), contractFromFiles(filesOf(b)));
  t.is(record.match, 'perfect');
});

test('durable: records and the creation index survive a restart; older blocks are searched for their creations', async (t) => {
  const tmp = tempDir();
  t.teardown(tmp.cleanup);
  let node = await startTestNode({ dataDir: tmp.dir });
  t.teardown(() => node.stop());
  const provider = ethersProvider(node.url);
  const b = box();
  const { address: addr, hash } = await deploy(ethersWallet(node.url, 1, provider), b, [9n]);
  provider.destroy();
  const r = await postVerify(node.url, { address: addr, chain: '7120', files: filesOf(b) });
  t.is(r.status, 200, r.text);
  await node.stop();

  // A database written before the creation index existed: no index entry, the index starting after this block.
  const db = await openRocksStore(join(tmp.dir, 'db'));
  const head = (await db.get(metaKey('head')))!.readBigUInt64BE(0);
  await db.write([
    { type: 'del', key: creationKey(addr.toLowerCase()) },
    { type: 'put', key: metaKey('creation-index-from'), value: u64be(head + 1n) },
  ]);
  await db.close();

  node = await startTestNode({ dataDir: tmp.dir });
  const files = await httpJson(`${node.url}/files/any/7120/${addr}`);
  t.is(files.status, 200);
  t.is(files.body.status, 'full');
  t.is(
    files.body.files.find((f: { name: string }) => f.name === 'constructor-args.txt').content,
    ethers.AbiCoder.defaultAbiCoder().encode(['uint256'], [9n]),
  );
  const creation = await rpcOk<{ transactionHash: string; creator: string } | null>(node.url, 'native_getContractCreation', [
    addr,
  ]);
  t.is(creation?.transactionHash, hash);
  t.is(creation?.creator, ethersWallet(node.url, 1).address.toLowerCase());
  t.is(await rpcOk(node.url, 'native_getContractCreation', [ethers.Wallet.createRandom().address]), null);
});
