import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { crypto, nativeBackend } from '../../ts/crypto/index.js';
import { findAddonPath, loadNativeAddon, loadNativeBackend, nativeLoadError } from '../../ts/crypto/native.js';
import { nativeOrSkip } from './fixtures.js';

const indexJs = fileURLToPath(new URL('../../ts/crypto/index.js', import.meta.url));
const nativeJs = fileURLToPath(new URL('../../ts/crypto/native.js', import.meta.url));

/** Runs a tiny ESM script in a fresh node (the loader caches per process) and parses its JSON output. */
function child(script: string, env: Record<string, string>): Record<string, unknown> {
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  return JSON.parse(out) as Record<string, unknown>;
}

const probe = `
import { loadNativeBackend, nativeLoadError } from ${JSON.stringify(nativeJs)};
const a = loadNativeBackend();
console.log(JSON.stringify({ loaded: a !== null, same: a === loadNativeBackend(), error: nativeLoadError() }));`;

test('loader caches: the same backend object every call', (t) => {
  t.is(loadNativeBackend(), loadNativeBackend());
  t.is(nativeBackend(), loadNativeBackend());
  t.is(loadNativeAddon() === null, loadNativeBackend() === null);
  t.is(nativeLoadError() === null, loadNativeBackend() !== null);
});

test('missing addon: null, no throw, with a reason', (t) => {
  const r = child(probe, { NATIVE_ADDON_PATH: '/nonexistent/addon.node' });
  t.deepEqual(r, { loaded: false, same: true, error: 'addon not built (run npm run build:native)' });
});

test('broken addon file: null, no throw, with the load error', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'native-addon-'));
  try {
    const bogus = join(dir, 'index.node');
    writeFileSync(bogus, 'not an ELF file');
    const r = child(probe, { NATIVE_ADDON_PATH: bogus });
    t.false(r.loaded);
    t.true(r.same as boolean);
    t.regex(String(r.error), /.+/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('crypto() picks native when it loads, NATIVE_CRYPTO=js forces the twin', (t) => {
  const script = `import { crypto } from ${JSON.stringify(indexJs)}; console.log(JSON.stringify({ name: crypto().name }));`;
  t.deepEqual(child(script, { NATIVE_CRYPTO: 'js' }), { name: 'js' });
  t.is(crypto().name, process.env.NATIVE_CRYPTO === 'js' || !loadNativeBackend() ? 'js' : 'native');
});

test('native addon is found and reports its rayon pool', (t) => {
  const native = nativeOrSkip(t);
  if (!native) return;
  t.is(native.name, 'native');
  t.regex(findAddonPath() ?? '', /\.node$/);
  const addon = loadNativeAddon();
  t.true((addon?.threads() ?? 0) >= 1);
  t.log(`addon ${findAddonPath()} v${addon?.version}, ${addon?.threads()} threads`);
});
