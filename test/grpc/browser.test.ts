/**
 * A browser gRPC-Web client against the node: the Connect client bundled with esbuild, in Debian's headless
 * Chromium driven by playwright-core, loaded from a page on another loopback origin (so CORS and the
 * preflight are exercised): unary GetBlock and a StreamEvents stream receiving several blocks, on both
 * HTTP backends.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { build } from 'esbuild';
import { chromium } from 'playwright-core';
import type { BrowserResult } from './browser-client.js';
import { startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const STREAMED_BLOCKS = 4;

/** The test page and the bundled client, served from 127.0.0.1 on a port of its own. */
async function servePage(bundle: string) {
  const html = '<!doctype html><meta charset="utf-8"><title>native.v1 gRPC-Web</title><script src="/client.js"></script>';
  const server = createServer((req, res) => {
    if (req.url === '/client.js') res.writeHead(200, { 'content-type': 'text/javascript' }).end(bundle);
    else if (req.url === '/') res.writeHead(200, { 'content-type': 'text/html' }).end(html);
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, close: () => new Promise((r) => server.close(r)) };
}

test('Chromium: Connect gRPC-Web client, unary GetBlock and a StreamEvents stream, on both HTTP backends', async (t) => {
  const entry = fileURLToPath(new URL('./browser-client.js', import.meta.url));
  const bundled = await build({
    entryPoints: [entry],
    bundle: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const page = await servePage(bundled.outputFiles[0].text);
  t.teardown(page.close);
  const profile = tempDir('native-chromium-');
  t.teardown(profile.cleanup);
  const browser = await chromium.launchPersistentContext(profile.dir, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
  });
  t.teardown(() => browser.close());
  const tab = await browser.newPage();
  const errors: string[] = [];
  tab.on('pageerror', (e) => errors.push(String(e)));
  await tab.goto(page.url);
  await tab.waitForFunction(() => typeof (globalThis as any).runGrpcWeb === 'function');

  for (const backend of ['uws', 'node'] as const) {
    const n = await startTestNode({ httpBackend: backend, blockTimeMs: 100 });
    try {
      await waitFor(() => n.node.ctx.chain.height >= 3, 15_000, 'blocks');
      const result = (await tab.evaluate(([url, blocks]) => (globalThis as any).runGrpcWeb(url, 2, blocks), [
        n.url,
        STREAMED_BLOCKS,
      ] as const)) as BrowserResult;
      const stored = (await n.node.ctx.chain.blocks.getBlock(2))!;
      t.is(result.block.index, '2', backend);
      t.is(result.block.hash, stored.hash);
      t.is(`0x${result.block.proposer}`, stored.validator);
      t.is(result.notFound, 'NotFound: block not found');
      t.is(result.streamed.length, STREAMED_BLOCKS);
      const hs = result.streamed.map(Number);
      t.true(
        hs.every((h, i) => i === 0 || h === hs[i - 1] + 1),
        `${backend}: consecutive blocks ${hs}`,
      );
      t.regex(result.userAgent, /HeadlessChrome|Chrome/);
      await waitFor(() => n.node.ctx.events!.listenerCount === 0, 10_000, 'the browser stream released');
    } finally {
      await n.stop();
    }
  }
  t.deepEqual(errors, []);
});
