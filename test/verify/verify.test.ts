import test from 'ava';
import { ethers } from 'ethers';
import { getVerifiedContract } from '../../ts/services/index.js';
import { rpcOk } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import {
  CONTRACTS_DIR,
  build,
  deploy,
  filesOf,
  firstDifference,
  fixture,
  link,
  postVerify,
  testWallet,
} from '../helpers/verify.js';

// One node for the file; tests run concurrently, each deploying with its own dev account.
let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

const wallet = (t: { teardown(fn: () => void): void }, i: number): ethers.Wallet => testWallet(t, n.url, i);

const BOX = fixture('Box.sol', CONTRACTS_DIR);
const boxBuild = (source = BOX, path = 'contracts/Box.sol') => build({ [path]: source }, path, 'Box');
const coder = ethers.AbiCoder.defaultAbiCoder();

test('perfect: Box with a constructor argument; files, tree, checks, v2 lookup and the services view agree', async (t) => {
  const w = wallet(t, 1);
  const b = boxBuild();
  const { address, hash } = await deploy(w, b, [42n]);
  // Sources are matched by content, not name: send the file under its bare name, as Foundry does.
  const r = await postVerify(n.url, { address, chain: '7120', files: { 'metadata.json': b.metadata, 'Box.sol': BOX } });
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { result: [{ address, chainId: '7120', status: 'perfect' }] });

  const files = await httpJson(`${n.url}/files/any/7120/${address}`);
  t.is(files.status, 200);
  t.is(files.body.status, 'full');
  const byName = Object.fromEntries(files.body.files.map((f: { name: string; content: string }) => [f.name, f.content]));
  t.is(byName['metadata.json'], b.metadata);
  t.is(byName['Box.sol'], BOX);
  t.is(byName['constructor-args.txt'], coder.encode(['uint256'], [42n]));
  t.is(byName['creator-tx-hash.txt'], hash);
  t.true(files.body.files.every((f: { path: string }) => f.path.startsWith(`contracts/full_match/7120/${address}/`)));

  const tree = await httpJson(`${n.url}/files/tree/any/7120/${address}`);
  t.is(tree.body.status, 'full');
  const sourceUrl = tree.body.files.find((u: string) => u.endsWith('/sources/contracts/Box.sol'));
  t.truthy(sourceUrl, JSON.stringify(tree.body));
  const served = await fetch(`${n.url}${sourceUrl}`);
  t.is(served.status, 200);
  t.is(await served.text(), BOX);

  const check = await httpJson(`${n.url}/check-by-addresses?addresses=${address}&chainIds=7120`);
  t.deepEqual(check.body, [{ address, status: 'perfect', chainIds: ['7120'] }]);
  const v2 = await httpJson(`${n.url}/v2/contract/7120/${address}?fields=deployment,compilation,abi`);
  t.is(v2.status, 200);
  t.like(v2.body, { match: 'exact_match', runtimeMatch: 'exact_match', creationMatch: 'exact_match', chainId: '7120', address });
  t.is(v2.body.deployment.transactionHash, hash);
  t.is(v2.body.deployment.deployer, w.address);
  t.is(v2.body.compilation.fullyQualifiedName, 'contracts/Box.sol:Box');
  t.deepEqual(v2.body.abi, b.abi);

  // The service function the explorer calls.
  const info = await getVerifiedContract(n.node.ctx, address);
  t.truthy(info);
  t.is(info!.match, 'perfect');
  t.is(info!.creationMatch, 'perfect');
  t.is(info!.contractName, 'Box');
  t.deepEqual(info!.abi, b.abi);
  t.deepEqual(info!.sources, { 'contracts/Box.sol': BOX });
  t.deepEqual(info!.constructorArgumentsDecoded, ['42']);
  t.is(info!.compilerVersion, JSON.parse(b.metadata).compiler.version);
  t.is(await getVerifiedContract(n.node.ctx, ethers.Wallet.createRandom().address), null);

  // Already perfect: answered from the store, with when it was stored.
  const again = await postVerify(n.url, { address, chain: '7120', files: filesOf(b) });
  t.is(again.status, 200);
  t.is(again.body.result[0].status, 'perfect');
  t.is(again.body.result[0].storageTimestamp, info!.verifiedAt);
});

test('partial: same code, other metadata (a comment, another path); a later perfect replaces it, never the reverse', async (t) => {
  const w = wallet(t, 2);
  const commented = `${BOX}\n// deployed from a checkout with this comment\n`;
  const deployed = boxBuild(commented);
  const original = boxBuild();
  t.not(deployed.metadata, original.metadata);
  const { address, hash } = await deploy(w, deployed, [7n]);

  const partial = await postVerify(n.url, { address, chain: '7120', files: filesOf(original) });
  t.is(partial.status, 200, partial.text);
  t.is(partial.body.result[0].status, 'partial');
  let files = await httpJson(`${n.url}/files/any/7120/${address}`);
  t.is(files.body.status, 'partial');
  t.true(files.body.files[0].path.startsWith(`contracts/partial_match/7120/${address}/`));
  t.is((await httpJson(`${n.url}/files/7120/${address}`)).status, 404, 'the full-match lookup does not list a partial one');
  const all = await httpJson(`${n.url}/check-all-by-addresses?addresses=${address}&chainIds=7120`);
  t.deepEqual(all.body, [{ address, chainIds: [{ chainId: '7120', status: 'partial' }] }]);
  t.is((await getVerifiedContract(n.node.ctx, address))!.match, 'partial');

  // A second partial match is not stored (Sourcify: 409).
  const second = await postVerify(n.url, { address, chain: '7120', files: filesOf(original) });
  t.is(second.status, 409, second.text);
  t.regex(second.body.error, /already partially verified/);

  // The exact sources: perfect replaces partial.
  const perfect = await postVerify(n.url, { address, chain: '7120', files: filesOf(deployed) });
  t.is(perfect.status, 200, perfect.text);
  t.is(perfect.body.result[0].status, 'perfect');
  files = await httpJson(`${n.url}/files/any/7120/${address}`);
  t.is(files.body.status, 'full');
  t.is(files.body.files.find((f: { name: string }) => f.name === 'Box.sol').content, commented);

  // ...never the reverse: partial sources now leave the perfect match as it is.
  const after = await postVerify(n.url, { address, chain: '7120', files: filesOf(original) });
  t.is(after.status, 200);
  t.is(after.body.result[0].status, 'perfect');
  t.is((await getVerifiedContract(n.node.ctx, address))!.sources['contracts/Box.sol'], commented);

  // Another file path changes the metadata only: partial as well.
  const moved = boxBuild(BOX, 'src/Box.sol');
  const other = await deploy(w, moved, [8n]);
  // Another contract's creation transaction is refused (the same code could carry other arguments).
  const foreign = await postVerify(n.url, {
    address: other.address,
    chain: '7120',
    files: filesOf(original),
    creatorTxHash: hash,
  });
  t.is(foreign.status, 400);
  t.is(foreign.body.error, `transaction ${hash} created ${address}, not ${other.address}`);
  const byPath = await postVerify(n.url, { address: other.address, chain: '7120', files: filesOf(original) });
  t.is(byPath.status, 200, byPath.text);
  t.is(byPath.body.result[0].status, 'partial');
});

test('immutables: values set by the constructor are taken from the deployed code', async (t) => {
  const w = wallet(t, 3);
  const b = build({ 'contracts/Vault.sol': fixture('Vault.sol') }, 'contracts/Vault.sol', 'Vault');
  const tag = ethers.id('vault-7');
  const { address } = await deploy(w, b, [1000n, tag]);
  const code = await rpcOk<string>(n.url, 'eth_getCode', [address, 'latest']);
  t.not(code, b.deployedBytecode, 'the deployed code differs from the compiled code at the immutables');
  t.is(code.length, b.deployedBytecode.length);

  const r = await postVerify(n.url, { address, chain: '7120', files: filesOf(b) });
  t.is(r.status, 200, r.text);
  t.is(r.body.result[0].status, 'perfect');
  const files = await httpJson(`${n.url}/files/any/7120/${address}`);
  t.true(files.body.files.some((f: { name: string }) => f.name === 'immutable-references.json'));
  const stored = await n.node.ctx.verification!.lookup(7120, address.toLowerCase());
  const values = Object.values(stored!.immutables);
  t.true(values.includes(tag), JSON.stringify(stored!.immutables));
  t.true(values.includes(ethers.toBeHex(1000n, 32)));
  t.true(values.includes(ethers.zeroPadValue(w.address.toLowerCase(), 32)));
});

test('constructor arguments: an ERC-20 with a supply beyond 2^53, decoded exactly and stored', async (t) => {
  const w = wallet(t, 4);
  const source = fixture('Token.sol', CONTRACTS_DIR);
  const b = build({ 'contracts/Token.sol': source }, 'contracts/Token.sol', 'Token');
  const supply = 10n ** 24n + 7n;
  const { address } = await deploy(w, b, ['Verified Token', 'VT', supply]);
  const r = await postVerify(n.url, { address, chain: '7120', files: filesOf(b) });
  t.is(r.status, 200, r.text);
  t.is(r.body.result[0].status, 'perfect');
  const encoded = coder.encode(['string', 'string', 'uint256'], ['Verified Token', 'VT', supply]);
  const info = await getVerifiedContract(n.node.ctx, address);
  t.is(info!.constructorArguments, encoded);
  t.deepEqual(info!.constructorArgumentsDecoded, ['Verified Token', 'VT', supply.toString()]);
  const v2 = await httpJson(`${n.url}/v2/contract/7120/${address}?fields=constructorArguments`);
  t.is(v2.body.constructorArguments, encoded);
  // The ABI decodes the contract's logs (what the explorer does with it).
  const abi = info!.abi as unknown as ethers.InterfaceAbi;
  const receipt = await (await new ethers.Contract(address, abi, w).transfer(w.address, 5n)).wait(1, 60_000);
  const parsed = new ethers.Interface(abi).parseLog(receipt!.logs[0]);
  t.is(parsed?.name, 'Transfer');
});

test('linked library: placeholders take the library address from the deployed code; the library itself matches too', async (t) => {
  const w = wallet(t, 5);
  const sources = { 'contracts/MathLib.sol': fixture('MathLib.sol'), 'contracts/Calculator.sol': fixture('Calculator.sol') };
  const lib = build(sources, 'contracts/MathLib.sol', 'MathLib');
  const calc = build(sources, 'contracts/Calculator.sol', 'Calculator');
  t.true(calc.deployedBytecode.includes('__$'), 'Calculator is compiled with a library placeholder');
  const libDeployed = await deploy(w, lib);
  const linked = link(calc.bytecode, { 'contracts/MathLib.sol:MathLib': libDeployed.address });
  const { address } = await deploy(w, calc, [], linked);
  t.is(await new ethers.Contract(address, calc.abi, w).compute.staticCall(2n, 3n, 4n), 20n);

  const r = await postVerify(n.url, { address, chain: '7120', files: filesOf(calc) });
  t.is(r.status, 200, r.text);
  t.is(r.body.result[0].status, 'perfect');
  t.deepEqual(r.body.result[0].libraryMap, { 'contracts/MathLib.sol:MathLib': libDeployed.address.toLowerCase() });
  const files = await httpJson(`${n.url}/files/any/7120/${address}`);
  const map = files.body.files.find((f: { name: string }) => f.name === 'library-map.json');
  t.deepEqual(JSON.parse(map.content), { 'contracts/MathLib.sol:MathLib': libDeployed.address.toLowerCase() });

  // The library's own deployed code starts with its address (call protection) where the compiled code has zeros.
  const rl = await postVerify(n.url, { address: libDeployed.address, chain: '7120', files: filesOf(lib) });
  t.is(rl.status, 200, rl.text);
  t.is(rl.body.result[0].status, 'perfect');
});

test('wrong source: 500 naming the first differing byte; does not compile: 500 with the compiler message; missing source: 400', async (t) => {
  const w = wallet(t, 6);
  const b = boxBuild();
  const { address } = await deploy(w, b, [1n]);
  const code = await rpcOk<string>(n.url, 'eth_getCode', [address, 'latest']);
  const wrong = boxBuild(BOX.replace('"Box: nope"', '"Box: no!"'));
  t.not(wrong.deployedBytecode, code);
  const r = await postVerify(n.url, { address, chain: '7120', files: filesOf(wrong) });
  t.is(r.status, 500, r.text);
  const offset = firstDifference(wrong.deployedBytecode, code);
  t.regex(r.body.error, new RegExp(`don't match: first difference at byte offset ${offset} of the runtime code`));
  t.is((await httpJson(`${n.url}/files/any/7120/${address}`)).status, 404, 'nothing stored');

  // Metadata may carry the sources' content itself (useLiteralContent): a source that does not compile.
  const meta = JSON.parse(b.metadata);
  meta.sources['contracts/Box.sol'] = { content: BOX.replace('contract Box {', 'contract Box {{') };
  const broken = await postVerify(n.url, { address, chain: '7120', files: { 'metadata.json': JSON.stringify(meta) } });
  t.is(broken.status, 500, broken.text);
  t.regex(broken.body.error, /^compilation failed: .*ParserError/s);

  const missing = await postVerify(n.url, { address, chain: '7120', files: { 'metadata.json': b.metadata } });
  t.is(missing.status, 400);
  t.regex(missing.body.error, /missing sources: contracts\/Box\.sol \(keccak256 0x[0-9a-f]{64}\)/);
});

test('an address without code: 500 naming the address', async (t) => {
  const b = boxBuild();
  const address = ethers.Wallet.createRandom().address;
  const r = await postVerify(n.url, { address, chain: '7120', files: filesOf(b) });
  t.is(r.status, 500, r.text);
  t.is(r.body.error, `chain 7120 does not have a contract deployed at ${address}`);
  const v2 = await httpJson(`${n.url}/v2/contract/7120/${address}`);
  t.is(v2.status, 404);
  t.deepEqual(v2.body, { match: null, creationMatch: null, runtimeMatch: null, chainId: '7120', address });
});

test('bad requests: unsupported chains 400, malformed bodies 400, unverified lookups 404 in Sourcify shapes', async (t) => {
  const b = boxBuild();
  const address = ethers.Wallet.createRandom().address;
  const cases: [Record<string, unknown>, number, RegExp][] = [
    [{ address, chain: '1', files: filesOf(b) }, 400, /chain 1 is not supported: this verifier serves chain 7120/],
    [{ address, chain: '7119', files: filesOf(b) }, 400, /chain 7119 is not supported/],
    [{ address: '0x1234', chain: '7120', files: filesOf(b) }, 400, /Invalid address: 0x1234/],
    [{ address, chain: '7120', files: { 'Box.sol': BOX } }, 400, /Metadata file not found/],
    [{ address, chain: '7120' }, 400, /Couldn't extract files/],
    [{ address, chain: '7120', files: { 'metadata.json': b.metadata, 'x.sol': 5 } }, 400, /file x.sol must be a string/],
  ];
  for (const [body, status, error] of cases) {
    const r = await postVerify(n.url, body);
    t.is(r.status, status, JSON.stringify(body).slice(0, 80));
    t.regex(r.body.error, error);
  }
  const notJson = await httpJson(`${n.url}/verify`, {
    method: 'POST',
    body: '{nope',
    headers: { 'content-type': 'application/json' },
  });
  t.is(notJson.status, 400);
  t.regex(notJson.body.error, /invalid JSON body/);
  const two = { 'a.json': b.metadata, 'b.json': boxBuild(BOX, 'src/Box.sol').metadata, 'Box.sol': BOX };
  const choose = await postVerify(n.url, { address, chain: '7120', files: two });
  t.is(choose.status, 400);
  t.deepEqual(choose.body.contractsToChoose, [
    { name: 'Box', path: 'contracts/Box.sol' },
    { name: 'Box', path: 'src/Box.sol' },
  ]);

  const unverified = await httpJson(`${n.url}/files/any/7120/${address}`);
  t.is(unverified.status, 404);
  t.deepEqual(unverified.body, { error: 'Files have not been found!' });
  t.is((await httpJson(`${n.url}/files/any/5/${address}`)).status, 400);
  t.deepEqual((await httpJson(`${n.url}/check-all-by-addresses?addresses=${address}&chainIds=7120`)).body, [
    { address, status: 'false' },
  ]);
  t.is((await httpJson(`${n.url}/check-all-by-addresses?chainIds=7120`)).status, 400);
  t.is((await httpJson(`${n.url}/check-by-addresses?addresses=nope&chainIds=7120`)).status, 400);
  const job = await httpJson(`${n.url}/v2/verify/no-such-job`);
  t.is(job.status, 404);
  t.is(job.body.customCode, 'job_not_found');
  const chains = await httpJson(`${n.url}/chains`);
  t.deepEqual(
    chains.body.map((c: { chainId: number; supported: boolean }) => [c.chainId, c.supported]),
    [
      [7119, false],
      [7120, true],
    ],
  );
});
