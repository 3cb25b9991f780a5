import test from 'ava';
import { request } from 'node:http';
import { ethers } from 'ethers';
import { compiled } from '../helpers/contracts.js';
import { ethersWallet, rpcOk, signCall, waitReceipt } from '../helpers/evm.js';
import { startTestNode } from '../helpers/node.js';

/** One raw POST /rpc: the status, the headers and the whole body as text. */
function post(url: string, body: unknown): Promise<{ headers: Record<string, string | string[] | undefined>; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${url}/rpc`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      const parts: Buffer[] = [];
      res.on('data', (d: Buffer) => parts.push(d));
      res.on('end', () => resolve({ headers: res.headers, text: Buffer.concat(parts).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

const traceReq = (hash: string, options?: Record<string, unknown>) => ({
  jsonrpc: '2.0',
  id: 7,
  method: 'debug_traceTransaction',
  params: options ? [hash, options] : [hash],
});
// The cap is what these requests test: the longest timeout allowed keeps a loaded machine from hitting the 10 s default first.
const CAP_TEST = { timeout: '30s' };

for (const backend of ['uws', 'node'] as const) {
  test(`${backend}: struct logs over 1 MB are streamed as produced, and equal the answer built in memory`, async (t) => {
    const n = await startTestNode({ httpBackend: backend });
    t.teardown(() => n.stop());
    const w = ethersWallet(n.url, 1);
    const iface = new ethers.Interface(compiled('Tracer').abi);
    const tracer = ethers.getCreateAddress({ from: w.address, nonce: 0 });
    const raws = [
      await signCall(w, null, compiled('Tracer').bytecode, 0, 1_000_000n),
      await signCall(w, tracer, iface.encodeFunctionData('loop', [3n]), 1, 200_000n),
      await signCall(w, tracer, iface.encodeFunctionData('loop', [150n]), 2, 2_000_000n),
      await signCall(w, tracer, iface.encodeFunctionData('loop', [4_000n]), 3, 16_000_000n),
    ];
    const hashes: string[] = [];
    for (const raw of raws) hashes.push(await rpcOk(n.url, 'eth_sendRawTransaction', [raw]));
    for (const h of hashes) await waitReceipt(n.url, h);

    // A small trace: one piece, with a length.
    const small = await post(n.url, traceReq(hashes[1]));
    t.truthy(small.headers['content-length']);
    t.is(small.headers['transfer-encoding'], undefined);
    const smallBody = JSON.parse(small.text);
    t.is(smallBody.id, 7);
    t.true(smallBody.result.structLogs.length > 0);

    // Over 1 MB: chunked, and the same result as a batch answer (batches are built in memory).
    const big = await post(n.url, traceReq(hashes[2]));
    t.is(big.headers['transfer-encoding'], 'chunked');
    t.true(big.text.length > 1 << 20);
    const streamed = JSON.parse(big.text);
    const [inMemory] = JSON.parse((await post(n.url, [traceReq(hashes[2])])).text);
    t.is(streamed.error, undefined);
    t.deepEqual(streamed, inMemory);
    t.is(streamed.result.failed, false);
    t.true(streamed.result.structLogs.length > 3000);

    // Past the 50 MB cap after streaming began: the partial result is closed and the error named.
    const capped = await post(n.url, traceReq(hashes[3], CAP_TEST));
    t.is(capped.headers['transfer-encoding'], 'chunked');
    const cappedBody = JSON.parse(capped.text);
    t.deepEqual(cappedBody.error, { code: -32000, message: 'output too large' });
    t.true(cappedBody.result.structLogs.length > 0);
    // In a batch the same trace is refused before anything is sent.
    const [batched] = JSON.parse((await post(n.url, [traceReq(hashes[3], CAP_TEST)])).text);
    t.deepEqual(batched.error, { code: -32000, message: 'output too large' });
    t.is(batched.result, undefined);
    // The node serves on meanwhile and after.
    t.is(typeof (await rpcOk(n.url, 'eth_blockNumber')), 'string');
  });
}
