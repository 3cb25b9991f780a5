import test from 'ava';
import { ethers } from 'ethers';
import { rpc } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import {
  CONTRACTS_DIR,
  build,
  deploy,
  filesOf,
  firstDifference,
  fixture,
  postVerify,
  testWallet,
  waitJob,
} from '../helpers/verify.js';

// One node for the file; each test deploys with its own dev account.
let n: TestNode;
test.before(async () => {
  n = await startTestNode();
});
test.after.always(() => n?.stop());

const wallet = (t: { teardown(fn: () => void): void }, i: number): ethers.Wallet => testWallet(t, n.url, i);

/** The standard JSON input a Foundry project compiles (forge sends it whole, with every source). */
function stdJsonInput(sources: Record<string, string>, settings: Record<string, unknown>) {
  return {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([p, content]) => [p, { content }])),
    settings: { ...settings, outputSelection: { '*': { '*': ['abi', 'evm.bytecode', 'evm.deployedBytecode', 'metadata'] } } },
  };
}

test('Hardhat verify plugin (Sourcify mode, apiUrl http://node/sourcify): check-all-by-addresses, then POST to apiUrl', async (t) => {
  const w = wallet(t, 1);
  const b = build({ 'contracts/Vault.sol': fixture('Vault.sol') }, 'contracts/Vault.sol', 'Vault');
  const { address } = await deploy(w, b, [5n, ethers.id('hardhat')]);
  const apiUrl = `${n.url}/sourcify`;
  // isVerified(): GET `${apiUrl}/check-all-by-addresses?addresses=…&chainIds=…`
  const before = await httpJson(`${apiUrl}/check-all-by-addresses?addresses=${address}&chainIds=7120`);
  t.is(before.status, 200);
  t.deepEqual(before.body, [{ address, status: 'false' }]);
  // verify(): POST `${apiUrl}` { address, files: { metadata.json, <source name>: content }, chain }
  const r = await postVerify(
    n.url,
    { address, files: { 'metadata.json': b.metadata, ...b.sources }, chain: '7120' },
    '/sourcify',
  );
  t.is(r.status, 200, r.text);
  t.deepEqual(r.body, { result: [{ address, chainId: '7120', status: 'perfect' }] });
  const after = await httpJson(`${apiUrl}/check-all-by-addresses?addresses=${address.toLowerCase()}&chainIds=7120`);
  t.deepEqual(after.body, [{ address, chainIds: [{ chainId: '7120', status: 'perfect' }] }]);
  // getContractUrl(): `${browserUrl}/contracts/full_match/<chain>/<address>/` with browserUrl http://node/repository
  const meta = await fetch(`${n.url}/repository/contracts/full_match/7120/${address}/metadata.json`);
  t.is(meta.status, 200);
  t.is(await meta.text(), b.metadata);
});

test('Foundry (`forge verify-contract --verifier sourcify --verifier-url http://node/sourcify/`): API v2 job, poll, lookup, 409 once verified', async (t) => {
  const w = wallet(t, 2);
  const sources = { 'src/Token.sol': fixture('Token.sol', CONTRACTS_DIR) };
  const b = build(sources, 'src/Token.sol', 'Token');
  const { address, hash } = await deploy(w, b, ['Forge', 'FRG', 10n ** 21n]);
  const base = `${n.url}/sourcify/`;
  // is_contract_verified(): GET {base}v2/contract/{chain}/{address}, anything but 2xx = not verified
  const lookup = await httpJson(`${base}v2/contract/7120/${address}`);
  t.is(lookup.status, 404);
  // submit: POST {base}v2/verify/{chain}/{address} { stdJsonInput, compilerVersion, contractIdentifier, creationTransactionHash }
  const submit = await httpJson(`${base}v2/verify/7120/${address}`, {
    method: 'POST',
    json: {
      stdJsonInput: stdJsonInput(sources, b.settings),
      compilerVersion: JSON.parse(b.metadata).compiler.version,
      contractIdentifier: 'src/Token.sol:Token',
      creationTransactionHash: hash,
    },
  });
  t.is(submit.status, 202, submit.text);
  t.regex(submit.body.verificationId, /^[0-9a-f-]{36}$/);
  // check: GET {base}v2/verify/{id} until isJobCompleted
  const job = await waitJob(n.url, submit.body.verificationId, '/sourcify');
  t.is(job.error, undefined, JSON.stringify(job.error));
  t.like(job.contract, {
    match: 'exact_match',
    runtimeMatch: 'exact_match',
    creationMatch: 'exact_match',
    chainId: '7120',
    address,
  });
  t.truthy(job.jobFinishTime);
  const found = await httpJson(`${base}v2/contract/7120/${address}?fields=sources,compilation`);
  t.is(found.status, 200);
  t.deepEqual(found.body.sources, { 'src/Token.sol': { content: sources['src/Token.sol'] } });
  t.is(found.body.compilation.name, 'Token');
  const again = await httpJson(`${base}v2/verify/7120/${address}`, {
    method: 'POST',
    json: {
      stdJsonInput: stdJsonInput(sources, b.settings),
      compilerVersion: '0.8.37',
      contractIdentifier: 'src/Token.sol:Token',
    },
  });
  t.is(again.status, 409);
  t.is(again.body.customCode, 'already_verified');
  // The same record answers the v1 lookups (metadata.json is the recompiled one).
  const files = await httpJson(`${n.url}/files/any/7120/${address}`);
  t.is(files.body.status, 'full');
  t.is(
    JSON.parse(files.body.files.find((f: { name: string }) => f.name === 'metadata.json').content).compiler.version,
    '0.8.37+commit.f401782d',
  );
  // Foundry's older (v1) status check reads check-by-addresses relative to the verifier URL.
  const v1 = await httpJson(`${base}check-by-addresses?addresses=${address}&chainIds=7120`);
  t.deepEqual(v1.body, [{ address, status: 'perfect', chainIds: ['7120'] }]);
});

test('API v2: a factory (two CBOR auxdata regions) matches partially from other metadata; a failed job names the mismatch', async (t) => {
  const w = wallet(t, 3);
  const source = fixture('Factory.sol');
  const deployed = build({ 'contracts/Factory.sol': `${source}\n// another build\n` }, 'contracts/Factory.sol', 'Factory');
  const { address } = await deploy(w, deployed);
  const submit = async (src: string) =>
    httpJson(`${n.url}/v2/verify/7120/${address}`, {
      method: 'POST',
      json: {
        stdJsonInput: stdJsonInput({ 'contracts/Factory.sol': src }, deployed.settings),
        compilerVersion: '0.8.37+commit.f401782d',
        contractIdentifier: 'contracts/Factory.sol:Factory',
      },
    });
  const wrongSrc = source.replace('id = id_;', 'id = id_ + 1;');
  const wrong = await submit(wrongSrc);
  t.is(wrong.status, 202, wrong.text);
  const failed = await waitJob(n.url, wrong.body.verificationId);
  t.is(failed.error.customCode, 'no_match');
  t.regex(failed.error.message, /first difference at byte offset \d+/);
  t.like(failed.contract, { match: null, runtimeMatch: null, creationMatch: null });

  const partial = await submit(source);
  t.is(partial.status, 202, partial.text);
  const job = await waitJob(n.url, partial.body.verificationId);
  t.is(job.error, undefined, JSON.stringify(job.error));
  t.like(job.contract, { match: 'match', runtimeMatch: 'match', creationMatch: 'match' });
  const files = await httpJson(`${n.url}/files/any/7120/${address}`);
  t.is(files.body.status, 'partial');
  // The v1 shape of a mismatch, for the record: the first differing byte of the runtime code.
  const code = (await rpc<string>(n.url, 'eth_getCode', [address, 'latest'])).result!;
  const wrongBuild = build({ 'contracts/Factory.sol': wrongSrc }, 'contracts/Factory.sol', 'Factory');
  t.regex(failed.error.message, new RegExp(`offset ${firstDifference(wrongBuild.deployedBytecode, code)} `));
});

test('concurrent verifications run on the compile worker: JSON-RPC keeps answering while they compile', async (t) => {
  const w = wallet(t, 4);
  const b = build({ 'contracts/Token.sol': fixture('Token.sol', CONTRACTS_DIR) }, 'contracts/Token.sol', 'Token');
  const targets = [];
  for (let i = 0; i < 3; i++) targets.push((await deploy(w, b, [`T${i}`, `T${i}`, 1000n + BigInt(i)])).address);
  const svc = n.node.ctx.verification!;
  let done = false;
  const verifications = Promise.all(
    [...targets, targets[0]].map((address) => postVerify(n.url, { address, chain: '7120', files: filesOf(b) })),
  ).finally(() => {
    done = true;
  });
  let answered = 0;
  // Round trips that began and ended within one compilation: one was in flight when the calls went out and
  // still when they came back, and none ended in between. A compilation on the main thread would make that
  // impossible (nothing is answered until it returns).
  let answeredWhileCompiling = 0;
  while (!done) {
    const before = svc.compilations();
    const [height, balance] = await Promise.all([
      rpc(n.url, 'eth_blockNumber'),
      rpc(n.url, 'eth_getBalance', [w.address, 'latest']),
    ]);
    const after = svc.compilations();
    t.regex(String(height.result), /^0x[0-9a-f]+$/);
    t.regex(String(balance.result), /^0x[0-9a-f]+$/);
    answered++;
    if (before.inFlight > 0 && after.inFlight > 0 && before.completed === after.completed) answeredWhileCompiling++;
  }
  const results = await verifications;
  for (const r of results) {
    t.is(r.status, 200, r.text);
    t.is(r.body.result[0].status, 'perfect');
  }
  t.true(answered > 0);
  t.true(answeredWhileCompiling > 0, `JSON-RPC answered ${answered} times, never while a compilation ran`);
});
