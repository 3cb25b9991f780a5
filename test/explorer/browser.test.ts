/**
 * Every explorer page and alias in headless Chromium (Debian's package, driven by playwright-core): no console
 * errors (a CSP violation or a failed resource load is one), every link on the page resolves, and screenshots
 * of the main pages under test-results/explorer/ for review. Skipped with a note where /usr/bin/chromium is
 * missing (scripts/setup.sh installs it).
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { type BrowserContext, chromium } from 'playwright-core';
import { tempDir } from '../helpers/util.js';
import { type ExplorerFixture, explorerPaths, startExplorerNode } from './fixture.js';
import { NFT_XSS_BASE_URI, NFT_XSS_NAME, NFT_XSS_OVERRIDE } from './native-fixture.js';

const CHROMIUM = '/usr/bin/chromium';
const SHOTS = fileURLToPath(new URL('../../../test-results/explorer/', import.meta.url));
/** Pages whose screenshot is written for review. */
const MAIN_PAGES = new Set([
  'home',
  'blocks',
  'block',
  'transactions',
  'tx-native',
  'tx-evm-call-tree',
  'validators',
  'validator',
  'tokens',
  'token',
  'token-hostile',
  'tx-src20-transfer',
  'tx-delegate',
  'address-src20-holder',
  'nfts',
  'nft-collection',
  'nft-token',
  'nft-token-burned',
  'tx-nft-mint',
  'address-nft-owner',
  'address-nfts',
  'address-token-transfers',
  'address-token-holder',
  'address-contract',
  'richlist',
  'mempool',
]);

const run = existsSync(CHROMIUM) ? test.serial : test.skip;

let f: ExplorerFixture;
const profiles: { dir: string; cleanup: () => void }[] = [];
const contexts: BrowserContext[] = [];

/** Debian's Chromium with the flags a sandboxed CI needs and a fresh profile; JavaScript on unless asked. */
async function launch(javaScriptEnabled = true): Promise<BrowserContext> {
  const profile = tempDir('native-chromium-');
  profiles.push(profile);
  const ctx = await chromium.launchPersistentContext(profile.dir, {
    executablePath: CHROMIUM,
    javaScriptEnabled,
    viewport: { width: 1280, height: 900 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  contexts.push(ctx);
  return ctx;
}

/** In the page: the computed background colour of an element (typed here without the DOM library). */
const backgroundOf = (el: unknown): string =>
  (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el).backgroundColor;

test.before(async () => {
  if (!existsSync(CHROMIUM)) return;
  f = await startExplorerNode();
  mkdirSync(SHOTS, { recursive: true });
});

test.after.always(async () => {
  for (const c of contexts) await c.close();
  for (const p of profiles) p.cleanup();
  await f?.stop();
});

run('every page and alias renders in Chromium without console errors, and every link on it resolves', async (t) => {
  const page = await (await launch()).newPage();
  const errors: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  page.on('pageerror', (e) => errors.push(e.message));
  const checked = new Map<string, number>();
  for (const { name, path } of explorerPaths(f)) {
    errors.length = 0;
    const res = await page.goto(`${f.n.url}${path}`, { waitUntil: 'load' });
    t.is(res?.status(), 200, `${name} ${path}`);
    t.true((await page.title()).length > 0, `${name}: has a title`);
    // The stylesheet applied (CSP style-src 'self' let it in): the header bar has its background colour.
    t.is(await page.$eval('header.top', backgroundOf), 'rgb(20, 33, 61)', `${name}: styled`);
    const hrefs = await page.$$eval('a[href]', (as) => as.map((a) => a.getAttribute('href') ?? ''));
    for (const raw of hrefs) {
      const url = new URL(raw, page.url());
      const href = url.href;
      if (url.origin !== f.n.url) {
        t.fail(`${name}: link leaves the explorer: ${href}`);
        continue;
      }
      const key = url.pathname + url.search;
      if (!checked.has(key)) checked.set(key, (await fetch(href)).status);
      t.is(checked.get(key), 200, `${name}: link ${key}`);
    }
    // Nothing from the chain became an active URL: no javascript:/data: link, image or frame.
    t.is(
      await page.$$eval('[href^="javascript:" i], [src^="javascript:" i], [href^="data:" i], script', (els) => els.length),
      0,
      name,
    );
    if (MAIN_PAGES.has(name)) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
    t.deepEqual(errors, [], `${name}: console errors`);
  }
  t.log(`${explorerPaths(f).length} pages, ${checked.size} distinct links checked; screenshots in test-results/explorer/`);
  await page.close();
});

run('the home page at 1280 px shows the whole Latest transactions table (no column past the right edge)', async (t) => {
  const page = await (await launch()).newPage();
  await page.goto(`${f.n.url}/explorer`, { waitUntil: 'load' });
  const fit = await page.evaluate(() => {
    const d = (globalThis as unknown as { document: any }).document;
    const viewport = d.documentElement.clientWidth as number;
    const tables = [...d.querySelectorAll('section.two table')] as any[];
    return {
      viewport,
      scrollWidth: d.documentElement.scrollWidth as number,
      tables: tables.map((tb) => {
        const box = tb.getBoundingClientRect();
        const cells = [...tb.querySelectorAll('th, td')].map((c: any) => c.getBoundingClientRect().right as number);
        // Inside its own box and the viewport, and not clipped by a scrolling wrapper.
        const wrapper = tb.parentElement;
        return { right: box.right, cellsRight: Math.max(...cells), clip: wrapper.scrollWidth - wrapper.clientWidth };
      }),
    };
  });
  t.is(fit.tables.length, 2, JSON.stringify(fit));
  for (const tb of fit.tables) {
    t.true(tb.cellsRight <= fit.viewport, JSON.stringify(fit));
    t.true(tb.clip <= 0, JSON.stringify(fit));
  }
  t.true(fit.scrollWidth <= fit.viewport, JSON.stringify(fit));
  await page.close();
});

run('the search box finds a transaction and shows "not found" for nonsense, without JavaScript', async (t) => {
  const page = await (await launch(false)).newPage();
  await page.goto(`${f.n.url}/explorer`);
  await page.fill('input[name=q]', f.nativeTxids[2]);
  await Promise.all([page.waitForURL(`**/explorer/tx/${f.nativeTxids[2]}`), page.click('form.search button')]);
  t.regex((await page.textContent('main h1')) ?? '', /Transaction/);
  await page.fill('input[name=q]', '<b>nothing</b>');
  await Promise.all([page.waitForURL('**/explorer/search?q=*'), page.click('form.search button')]);
  t.regex((await page.textContent('main')) ?? '', /Nothing on this chain matches <b>nothing<\/b>/);
  t.is(await page.$('main b'), null, 'the probe is text, not markup');
});

run('hostile NFT URIs and names are shown as text in the browser, and clicking them goes nowhere', async (t) => {
  const page = await (await launch()).newPage();
  await page.goto(`${f.n.url}/explorer/nfts/${f.nft.hostile}/2`);
  const main = (await page.textContent('main')) ?? '';
  t.true(main.includes(NFT_XSS_OVERRIDE), 'the markup override is visible as text');
  t.true(main.includes(NFT_XSS_NAME), 'the collection name is visible as text');
  await page.goto(`${f.n.url}/explorer/nfts/${f.nft.hostile}`);
  const uri = page.getByText(NFT_XSS_BASE_URI, { exact: true });
  t.is(await uri.count(), 1);
  t.is(
    await uri.evaluate((el) => (el as { closest(s: string): unknown }).closest('a')),
    null,
    'the base URI is not inside a link',
  );
  const before = page.url();
  await uri.click();
  t.is(page.url(), before, 'clicking the URI navigates nowhere');
});
