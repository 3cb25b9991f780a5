import test from 'ava';
import { CONTENT_SECURITY_POLICY } from '../../ts/explorer/index.js';
import { devKey } from '../helpers/evm.js';
import { type ExplorerFixture, XSS_NAME, XSS_SYMBOL, explorerPaths, startExplorerNode } from './fixture.js';

let f: ExplorerFixture;
test.before(async () => {
  f = await startExplorerNode();
});
test.after.always(async () => {
  await f?.n.stop();
});

const get = (path: string) => fetch(`${f.n.url}${path}`, { redirect: 'manual' });

/** Markup that would run script or load something: such tags, event handler attributes, javascript: URLs. */
const ACTIVE_MARKUP = /<(script|img|iframe|object|embed)\b|<[^>]*\son[a-z]+\s*=|<[^>]*javascript:/i;

test('every page and alias answers 200 HTML with the CSP, nosniff and no active markup', async (t) => {
  for (const { name, path } of explorerPaths(f)) {
    const res = await get(path);
    const body = await res.text();
    t.is(res.status, 200, `${name} ${path}`);
    t.is(res.headers.get('content-type'), 'text/html; charset=utf-8', name);
    t.is(res.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY, name);
    t.is(res.headers.get('x-content-type-options'), 'nosniff', name);
    t.regex(body, /^<!doctype html>/, name);
    t.notRegex(body, ACTIVE_MARKUP, `${name}: no script, handler or javascript: URL`);
  }
});

test('the CSP allows no inline or remote script and no inline style', (t) => {
  t.regex(CONTENT_SECURITY_POLICY, /script-src 'none'/);
  t.regex(CONTENT_SECURITY_POLICY, /default-src 'none'/);
  t.notRegex(CONTENT_SECURITY_POLICY, /unsafe-inline|unsafe-eval/);
});

test('a token named like a script tag is shown escaped on the holder page', async (t) => {
  const body = await (await get(`/explorer/address/${f.tokenHolder}`)).text();
  t.true(body.includes('&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;'), 'name escaped');
  t.true(body.includes('&quot;&gt;&lt;img src=x onerror=alert(1)&gt;'), 'symbol escaped');
  t.false(body.includes(XSS_NAME));
  t.false(body.includes(XSS_SYMBOL));
});

test('search input, bad ids and unknown paths are echoed escaped', async (t) => {
  const probe = '<script>alert(1)</script>';
  const search = await get(`/explorer/search?q=${encodeURIComponent(probe)}`);
  t.is(search.status, 404);
  const s = await search.text();
  t.true(s.includes('&lt;script&gt;alert(1)&lt;/script&gt;'));
  t.notRegex(s, ACTIVE_MARKUP);
  const bad = await get(`/explorer/address/${encodeURIComponent('"><script>x</script>')}`);
  t.is(bad.status, 400);
  t.notRegex(await bad.text(), ACTIVE_MARKUP);
});

test('malformed ids answer a 400 page, unknown ones a 404 page, never a 500', async (t) => {
  const cases: [string, number][] = [
    ['/explorer/block/abc', 400],
    ['/explorer/block/-1', 400],
    ['/explorer/block/99999999999999999999', 400],
    ['/explorer/block/123456789', 404],
    [`/explorer/block/${'ab'.repeat(32)}`, 404],
    ['/explorer/tx/xyz', 400],
    [`/explorer/tx/${'0'.repeat(63)}`, 400],
    [`/explorer/tx/${'cd'.repeat(32)}`, 404],
    ['/explorer/address/0x123', 400],
    ['/explorer/address/%E0%A4%A', 400],
    [`/explorer/validators/${devKey(7).address}`, 404],
    ['/explorer/validator/nope', 400],
    ['/explorer/tokens/SRC20_xyz', 400],
    [`/explorer/tokens/SRC20_${'ab'.repeat(20)}`, 404],
    [`/explorer/token/SRC20_${'ab'.repeat(20)}`, 404],
    ['/explorer/blocks?page=0', 400],
    ['/explorer/blocks?page=abc', 400],
    ['/explorer/blocks?limit=1000', 400],
    ['/explorer/transactions?page=100000', 400],
    ['/explorer/richlist?limit=-5', 400],
    ['/explorer/no/such/page', 404],
    [`/explorer/address/0x${'a'.repeat(300)}`, 404],
  ];
  for (const [path, status] of cases) {
    const res = await get(path);
    t.is(res.status, status, path);
    t.is(res.headers.get('content-type'), 'text/html; charset=utf-8', path);
    t.is(res.headers.get('content-security-policy'), CONTENT_SECURITY_POLICY, path);
    t.regex(await res.text(), status === 404 ? /Not found/ : /Malformed request/, path);
  }
});

test('search redirects to the page an entry names', async (t) => {
  const block = await get(`/explorer/block/${f.busyHeight}`);
  const hash = /Hash<\/dt><dd class="mono">([0-9a-f]{64})</.exec(await block.text())?.[1];
  t.truthy(hash);
  const cases: [string, string][] = [
    [String(f.busyHeight), `/explorer/block/${f.busyHeight}`],
    [` ${f.busyHeight} `, `/explorer/block/${f.busyHeight}`],
    [f.nativeTxids[0], `/explorer/tx/${f.nativeTxids[0]}`],
    [`0x${f.nativeTxids[1].toUpperCase()}`, `/explorer/tx/${f.nativeTxids[1]}`],
    [hash as string, `/explorer/block/${f.busyHeight}`],
    [f.tokenHolder.toUpperCase().replace('0X', '0x'), `/explorer/address/${f.tokenHolder}`],
  ];
  for (const [q, location] of cases) {
    const res = await get(`/explorer/search?q=${encodeURIComponent(q)}`);
    t.is(res.status, 303, q);
    t.is(res.headers.get('location'), location, q);
  }
  for (const q of ['999999999', 'ab'.repeat(32), `SRC20_${'ab'.repeat(20)}`, 'no such thing']) {
    const res = await get(`/explorer/search?q=${encodeURIComponent(q)}`);
    t.is(res.status, 404, q);
    t.regex(await res.text(), /Nothing on this chain matches/);
  }
  // A block hash in the block path is the same block at its canonical (height) address.
  const byHash = await get(`/explorer/block/${hash}`);
  t.is(byHash.status, 303);
  t.is(byHash.headers.get('location'), `/explorer/block/${f.busyHeight}`);
});

test('pages show the entities and link between them', async (t) => {
  const tx = await (await get(`/explorer/tx/${f.nativeTxids[0]}`)).text();
  t.regex(tx, /Fee split/);
  t.regex(tx, /0\.00005 NATIVE to the proposer/);
  t.regex(tx, /0\.00005 NATIVE burned/);
  t.true(tx.includes(`href="/explorer/block/${f.busyHeight}"`) || /href="\/explorer\/block\/\d+"/.test(tx));
  t.true(tx.includes(`href="/explorer/address/${devKey(0).address}"`));
  const nested = await (await get(`/explorer/tx/${f.nestedTxid}`)).text();
  t.regex(nested, /Call tree/);
  t.regex(nested, /CREATE2/);
  t.regex(nested, /STATICCALL/);
  t.regex(nested, /child says no|execution reverted/);
  t.regex(nested, /<h2>Logs<\/h2>/);
  const home = await (await get('/explorer')).text();
  t.regex(home, /<svg viewBox="0 0 640 180"/);
  t.regex(home, /Validators online/);
  const validator = await (await get(`/explorer/validators/${f.validator}`)).text();
  t.regex(validator, /Blocks produced per epoch/);
  const contract = await (await get(`/explorer/address/${f.tokenAddress}`)).text();
  t.regex(contract, /Runtime bytecode/);
  t.regex(contract, /verified: perfect match/);
  t.regex(contract, /contract Token/, 'verified source shown');
  const tracer = await (await get(`/explorer/address/${f.tracerAddress}`)).text();
  t.regex(tracer, /not verified/);
  const transfer = await (await get(`/explorer/tx/${f.tokenTransferTxid}`)).text();
  t.regex(transfer, /transfer\(address to, uint256 amount\)/, 'call decoded with the verified ABI');
  t.regex(transfer, /Transfer\(address from, address to, uint256 value\)/, 'log decoded with the verified ABI');
  t.regex(transfer, /amount \(uint256\): <span class="mono wrap">1234000000000000000000<\/span>/);
  const stylesheet = await get('/explorer/static/style.css');
  t.is(stylesheet.status, 200);
  t.is(stylesheet.headers.get('content-type'), 'text/css; charset=utf-8');
  t.is(stylesheet.headers.get('x-content-type-options'), 'nosniff');
});
