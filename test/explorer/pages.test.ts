import test from 'ava';
import { CONTENT_SECURITY_POLICY } from '../../ts/explorer/index.js';
import { devKey } from '../helpers/evm.js';
import { type ExplorerFixture, XSS_NAME, XSS_SYMBOL, explorerPaths, startExplorerNode } from './fixture.js';
import { SRC20_XSS_NAME, SRC20_XSS_SYMBOL } from './native-fixture.js';

let f: ExplorerFixture;
test.before(async () => {
  f = await startExplorerNode();
});
test.after.always(async () => {
  await f?.stop();
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
    ['/explorer/nfts/SRC721_xyz', 400],
    [`/explorer/nfts/SRC721_${'ab'.repeat(20)}`, 404],
    [`/explorer/nft/SRC721_${'ab'.repeat(20)}/1`, 404],
    [`/explorer/nfts/${f.nft.hostile}/abc`, 400],
    [`/explorer/nfts/${f.nft.hostile}/99`, 404],
    [`/explorer/nfts/${f.nft.hostile}/18446744073709551616`, 400],
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

test('SRC-20: tokens list, token page (holders with percentages, transfers, distribution chart) and its pages', async (t) => {
  const { gold, hostile } = f.native;
  const list = await (await get('/explorer/tokens')).text();
  t.true(list.includes(`href="/explorer/tokens/${gold}"`));
  t.regex(list, /Gold<\/a><\/td>\s*<td>GLD<\/td>/);
  t.regex(list, /10,450 GLD/);
  const page = await (await get(`/explorer/tokens/${gold}`)).text();
  t.regex(page, /<h1>Gold \(GLD\)<\/h1>/);
  t.regex(page, /Total supply<\/dt><dd><span class="wrap">10,450 GLD/);
  t.regex(page, /Maximum supply<\/dt><dd><span class="wrap">20,000 GLD/);
  // 6,500 of 10,450 GLD: 62.2009...% (the holder query's percentage, shown to 4 decimals).
  t.regex(page, /6,500 GLD<\/td><td class="num">62\.201%<\/td>/);
  t.regex(page, /500 GLD<\/td><td class="num">4\.7847%<\/td>/);
  t.regex(page, /<svg viewBox="0 0 640 28"[^>]*aria-label="Holder distribution/);
  t.regex(page, /Holders \(4\)/);
  t.regex(page, /Transfers \(5\)/);
  for (const kind of ['deploy', 'transfer', 'mint', 'burn']) t.regex(page, new RegExp(`<td>${kind}</td>`));
  t.true(page.includes(`href="/explorer/address/${devKey(0).address}"`));
  // The holders tab pages through the ranked holder index: page 2 of 2 holders a page holds ranks 3 and 4.
  const holders = await (await get(`/explorer/tokens/${gold}?tab=holders&limit=2&page=2`)).text();
  t.regex(holders, /<td class="num">3<\/td>/);
  t.regex(holders, /<td class="num">4<\/td>/);
  t.notRegex(holders, /<td class="num">1<\/td><td><a class="mono"/);
  t.true(holders.includes(`href="/explorer/tokens/${gold}?tab=holders&amp;page=1&amp;limit=2"`));
  t.notRegex(holders, /<h2>Transfers<\/h2>/);
  const transfers = await (await get(`/explorer/tokens/${gold}?tab=transfers&limit=2`)).text();
  t.notRegex(transfers, /<h2>Holders<\/h2>/);
  t.is((transfers.match(/<td>(deploy|transfer|mint|burn)<\/td>/g) ?? []).length, 2);
  t.is((await get(`/explorer/tokens/${gold}?tab=nope`)).status, 400);
  // The hostile token: its name and symbol are text wherever they appear.
  for (const path of [
    '/explorer/tokens',
    `/explorer/tokens/${hostile}`,
    `/explorer/address/${devKey(5).address}`,
    `/explorer/tx/${f.native.hostileDeployTxid}`,
  ]) {
    const body = await (await get(path)).text();
    t.true(body.includes('&lt;script&gt;alert(&quot;src20&quot;)&lt;/script&gt;'), `${path}: name escaped`);
    t.true(body.includes('&quot;&gt;&lt;svg onload=1&gt;'), `${path}: symbol escaped`);
    t.false(body.includes(SRC20_XSS_NAME), path);
    t.false(body.includes(SRC20_XSS_SYMBOL), path);
    t.notRegex(body, ACTIVE_MARKUP, path);
  }
});

test('SRC-20: holdings and transfers on the address page, decoded operations on the transaction page, search', async (t) => {
  const { gold, hostile } = f.native;
  const holder = await (await get(`/explorer/address/${devKey(5).address}`)).text();
  t.regex(
    holder,
    new RegExp(
      `href="/explorer/tokens/${gold}" title="${gold}">Gold</a></td><td>GLD</td><td>SRC-20</td><td class="num">500 GLD</td>`,
    ),
  );
  t.true(holder.includes(`href="/explorer/tokens/${hostile}"`));
  t.regex(holder, /1,000 &quot;&gt;&lt;svg onload=1&gt;/, 'hostile token balance in its units');
  t.regex(holder, /ERC-20 \(EVM\)/);
  const sent = await (await get(`/explorer/address/${devKey(0).address}?tab=token-transfers`)).text();
  t.regex(sent, /SRC-20 transfers \(3\)/);
  t.regex(sent, /<td>transfer <span class="badge">out<\/span><\/td>/);
  t.regex(sent, /<td>deploy <span class="badge">in<\/span><\/td>/);
  t.regex(sent, /2,500 GLD/);
  t.is((await get(`/explorer/address/${devKey(0).address}?tab=nft`)).status, 400);

  const transfer = await (await get(`/explorer/tx/${f.native.goldTransferTxid}`)).text();
  // One naming scheme for operation kinds: "<family> <action>" (Coin, EVM, SRC-20, SRC-721, Staking).
  t.regex(transfer, /<dt>Kind<\/dt><dd>SRC-20 transfer<\/dd>/);
  const kinds = [...(await (await get('/explorer/transactions')).text()).matchAll(/<span class="kind">([^<]*)<\/span>/g)].map(
    (m) => m[1],
  );
  t.true(kinds.length > 5, kinds.join(', '));
  for (const k of kinds) t.regex(k, /^(Coin|EVM|SRC-20|SRC-721|Staking) [a-z][a-z ]*$/, k);
  t.regex(transfer, /<dt>amount<\/dt><dd><span class="wrap">2,500 GLD<\/span>/);
  t.true(transfer.includes(`href="/explorer/tokens/${gold}" title="${gold}">Gold (GLD)</a>`));
  t.regex(transfer, /<h2>Tokens moved<\/h2>/);
  const deploy = await (await get(`/explorer/tx/${f.native.goldDeployTxid}`)).text();
  t.regex(deploy, /<dt>Token<\/dt><dd><a class="mono" href="\/explorer\/tokens\/SRC20_[0-9a-f]{40}"/);
  t.regex(deploy, /<dt>supply<\/dt><dd><span class="wrap">10,000 GLD/);
  t.regex(deploy, /TokenDeploy/);
  const delegate = await (await get(`/explorer/tx/${f.native.delegateTxid}`)).text();
  t.regex(delegate, /Operation: Delegate/);
  t.regex(delegate, /<dt>amount<\/dt><dd><span class="wrap">1,000 NATIVE/);
  t.true(delegate.includes(`href="/explorer/validators/${f.validator}" title="${f.validator}">explorer-validator</a>`));

  for (const [q, location] of [
    ['gld', `/explorer/tokens/${gold}`],
    ['Gold', `/explorer/tokens/${gold}`],
    [gold.toUpperCase().replace('SRC20_', 'SRC20_'), `/explorer/tokens/${gold}`],
  ]) {
    const res = await get(`/explorer/search?q=${encodeURIComponent(q)}`);
    t.is(res.status, 303, q);
    t.is(res.headers.get('location'), location, q);
  }
});

test('validators: stake, voting power, commission, uptime, status, delegators and rewards from the staking records', async (t) => {
  const list = await (await get('/explorer/validators')).text();
  t.regex(list, /<span class="badge good">active<\/span>/);
  t.regex(
    list,
    /<td class="num">21,000 NATIVE<\/td>\s*<td class="num">100%<\/td>\s*<td class="num">20,000 NATIVE<\/td>\s*<td class="num">2<\/td>\s*<td class="num">1%<\/td>\s*<td class="num">100%<\/td>/,
  );
  t.true(list.includes(`href="/explorer/validators/${f.validator}"`));
  const page = await (await get(`/explorer/validators/${f.validator}`)).text();
  t.regex(page, /Stake \(bonded\)<\/dt><dd>21,000 NATIVE/);
  t.regex(page, /Commission<\/dt><dd>1% \(100 bps\)/);
  t.regex(page, /Uptime<\/dt><dd>100%/);
  t.regex(page, /Delegators \(2, 21,000 NATIVE bonded\)/);
  t.true(page.includes(`href="/explorer/address/${devKey(6).address}"`));
  t.regex(page, /1,000 NATIVE<\/td><td class="num">4\.7619%<\/td>/);
  t.regex(page, /<span class="badge">self<\/span>/);
  // Epochs ended since the delegation: rewards were distributed, commission earned.
  t.notRegex(page, /Delegators&#39; rewards distributed<\/dt><dd>0 NATIVE/);
  t.notRegex(page, /Commission earned<\/dt><dd>0 NATIVE/);
  t.regex(page, /<h2>Rewards by epoch<\/h2>/);
});

test('SRC-721: collections, collection and token pages, holdings; hostile names and URIs are text, never links', async (t) => {
  const { hostile, art, owner } = f.nft;
  const escapedName = '&lt;img src=x onerror=alert(&quot;nft&quot;)&gt;';
  const escapedOverride = '&quot;&gt;&lt;script&gt;alert(&#39;uri&#39;)&lt;/script&gt;';
  const list = await (await get('/explorer/nfts')).text();
  t.true(list.includes(`href="/explorer/nfts/${hostile}">${escapedName}</a>`));
  t.true(list.includes(`href="/explorer/nfts/${art}">Art</a>`));
  const page = await (await get(`/explorer/nfts/${hostile}`)).text();
  t.regex(page, /Base URI<\/dt><dd><span class="wrap">javascript:alert\(1\)<\/span>/);
  t.regex(page, /Tokens in existence<\/dt><dd><span class="wrap">3</);
  t.regex(page, /Burned<\/dt><dd><span class="wrap">1</);
  t.regex(page, /Royalty<\/dt><dd><span class="wrap">2\.5% \(250 bps\)/);
  t.regex(page, /<td class="wrap">javascript:alert\(1\)\/1<\/td>/, 'token 1: base URI + id, as text');
  t.true(page.includes(`<td class="wrap">${escapedOverride}</td>`), 'token 2: the override, escaped');
  const tokensTable = page.slice(page.indexOf('<h2>Tokens</h2>'), page.indexOf('<h2>Holders</h2>'));
  t.notRegex(tokensTable, /href="\/explorer\/nfts\/[^"]+\/3"/, 'the burned token is not listed');
  t.regex(tokensTable, /href="\/explorer\/nfts\/[^"]+\/4"/);
  t.regex(page, /<td class="num">2<\/td><td class="num">66\.6667%<\/td>/, 'devKey(8) holds 2 of 3');
  t.regex(page, /Events \(6\)/, '4 mints, a transfer and a burn');
  t.regex(page, /<svg viewBox="0 0 640 28"/);
  const tokens = await (await get(`/explorer/nfts/${hostile}?tab=tokens&limit=2&page=2`)).text();
  t.true(tokens.includes(`href="/explorer/nfts/${hostile}/4"`));
  t.false(tokens.includes(`href="/explorer/nfts/${hostile}/1"`));
  t.is((await get(`/explorer/nfts/${hostile}?tab=approvals`)).status, 400);

  const token = await (await get(`/explorer/nfts/${hostile}/2`)).text();
  t.true(token.includes(`<h1><a href="/explorer/nfts/${hostile}">${escapedName}</a> #2</h1>`));
  t.true(token.includes(`href="/explorer/address/${owner}"`));
  t.true(token.includes(`Token URI</dt><dd><span class="wrap">${escapedOverride}</span>`));
  t.true(token.includes(`Approved spender</dt><dd><a class="mono" href="/explorer/address/${devKey(7).address}"`));
  t.regex(token, /History \(2 events\)/);
  t.regex(token, /<td>Minted<\/td>/);
  t.regex(token, /<td>Approved<\/td>/);
  const burned = await (await get(`/explorer/nft/${hostile}/3`)).text();
  t.regex(burned, /<span class="badge bad">burned<\/span>/);
  t.regex(burned, /<td>Burned<\/td>/);
  t.false(tokensTable.includes('javascript:alert(3)'), 'the burned token’s javascript: override is gone with it');

  const holder = await (await get(`/explorer/address/${owner}`)).text();
  t.true(
    holder.includes(`href="/explorer/nfts/${hostile}" title="${hostile}">${escapedName} (PROBE)</a></td><td class="num">2</td>`),
  );
  t.regex(holder, /NFTs held<\/dt><dd>2 in 1 collections/);
  t.regex(holder, /NFTs \(2\)/);
  const held = await (await get(`/explorer/address/${owner}?tab=nfts`)).text();
  t.true(held.includes(`href="/explorer/nfts/${hostile}/2">#2</a></td><td class="wrap">${escapedOverride}</td>`));
  const events = await (await get(`/explorer/address/${owner}?tab=nft-events`)).text();
  t.regex(events, /<td>Transferred<\/td>/);

  const mint = await (await get(`/explorer/tx/${f.nft.mintTxid}`)).text();
  t.regex(mint, /Operation: MintNft/);
  t.true(mint.includes(`href="/explorer/nfts/${hostile}/1" title="1">#1</a>`));
  t.true(mint.includes(`href="/explorer/nfts/${hostile}" title="${hostile}">${escapedName} (PROBE)</a>`));
  const deploy = await (await get(`/explorer/tx/${f.nft.deployTxid}`)).text();
  t.regex(deploy, /<dt>Collection<\/dt><dd><a class="mono" href="\/explorer\/nfts\/SRC721_[0-9a-f]{40}"/);
  t.regex(deploy, /<dt>base_uri<\/dt><dd><span class="wrap">javascript:alert\(1\)<\/span>/);

  for (const [q, location] of [
    [hostile.replace('SRC721_', 'SRC721_').toUpperCase().replace('SRC721_', 'SRC721_'), `/explorer/nfts/${hostile}`],
    ['art', `/explorer/nfts/${art}`],
  ]) {
    const res = await get(`/explorer/search?q=${encodeURIComponent(q)}`);
    t.is(res.status, 303, q);
    t.is(res.headers.get('location'), location, q);
  }
  // No page links a URI from the chain: every href is a path of ours.
  for (const { name, path } of explorerPaths(f)) {
    const body = await (await get(path)).text();
    t.notRegex(body, /href="(?!\/explorer)/, `${name}: an href that is not an explorer path`);
  }
});
