#!/usr/bin/env node
// Builds the Rust N-API addon in native/ into native/index.<platform>.node (napi naming), which
// ts/crypto/native.ts loads. @napi-rs/cli drives cargo; if it is unavailable or fails, cargo is run
// directly and the library copied to native/index.node.
//
// Missing cargo, libsecp256k1 or crate sources is NOT a failure: a warning is printed and the
// script exits 0, so the node still runs on the JS crypto twin. A compile error exits 1.
//
// Crate sources: when Debian's packaged crates are installed
// (/usr/share/cargo/registry: librust-sha2-dev librust-sha3-dev librust-rayon-dev), cargo is pointed
// at them with --config flags only for this invocation; a machine with crates.io builds normally.
//
// Env: NATIVE_CARGO_SOURCE=auto|debian|crates-io (default auto), NATIVE_DEBIAN_REGISTRY (dir),
//      NATIVE_DRIVER=napi|cargo (default napi), NATIVE_SKIP=1 (do nothing), NATIVE_BUILD_DEBUG=1 (debug
//      profile), SECP256K1_LIB_DIR (link dir).
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const crateDir = join(root, 'native');
const manifest = join(crateDir, 'Cargo.toml');
const lockFile = join(crateDir, 'Cargo.lock');
const debianRegistry = process.env.NATIVE_DEBIAN_REGISTRY || '/usr/share/cargo/registry';
const release = process.env.NATIVE_BUILD_DEBUG !== '1';

const log = (msg) => console.log(`[build-native] ${msg}`);
function skip(reason) {
  console.warn(`[build-native] WARNING: native addon not built (${reason}); the node will use the JS crypto twin.`);
  process.exit(0);
}
const run = (cmd, args, opts = {}) => spawnSync(cmd, args, { stdio: 'inherit', cwd: root, ...opts });

if (process.env.NATIVE_SKIP === '1') skip('NATIVE_SKIP=1');

// 1. Rust toolchain.
const cargoVersion = spawnSync('cargo', ['--version'], { encoding: 'utf8' });
if (cargoVersion.error || cargoVersion.status !== 0) skip('cargo not found on PATH; install Rust from https://rustup.rs');
log(cargoVersion.stdout.trim());

// 2. libsecp256k1 shared library (linked dynamically; headers are not needed).
function findSecp256k1() {
  const names = ['libsecp256k1.so', 'libsecp256k1.dylib', 'secp256k1.lib', 'libsecp256k1.dll.a'];
  const dirs = [
    process.env.SECP256K1_LIB_DIR,
    '/usr/lib',
    '/usr/lib64',
    '/usr/local/lib',
    '/opt/homebrew/lib',
    `/usr/lib/${process.arch === 'arm64' ? 'aarch64' : 'x86_64'}-linux-gnu`,
  ].filter(Boolean);
  for (const d of dirs) for (const n of names) if (existsSync(join(d, n))) return join(d, n);
  const pc = spawnSync('pkg-config', ['--libs-only-L', 'libsecp256k1'], { encoding: 'utf8' });
  return pc.status === 0 ? `pkg-config: ${pc.stdout.trim() || 'system default'}` : null;
}
const secp = findSecp256k1();
if (!secp) skip('libsecp256k1 not found; install libsecp256k1-dev (Debian/Ubuntu) or secp256k1 (Homebrew), or set SECP256K1_LIB_DIR');
log(`libsecp256k1: ${secp}`);

// 3. Where crates come from.
const hasDebianCrates = ['sha2-0.10', 'sha3-0.10', 'rayon-1.'].every((prefix) => {
  try {
    return readdirSync(debianRegistry).some((d) => d.startsWith(prefix));
  } catch {
    return false;
  }
});
let source = process.env.NATIVE_CARGO_SOURCE || 'auto';
if (source === 'auto') {
  // Decided offline, without probing any registry: Debian's packaged crates when installed,
  // otherwise cargo's normal registry (a machine that reaches it builds as usual).
  source = hasDebianCrates ? 'debian' : 'crates-io';
}
const cargoFlags = [];
if (source === 'debian') {
  if (!hasDebianCrates) skip(`NATIVE_CARGO_SOURCE=debian but no sha2/sha3/rayon crates under ${debianRegistry}`);
  cargoFlags.push(
    '--config', 'source.crates-io.replace-with="debian-packages"',
    '--config', `source.debian-packages.directory=${JSON.stringify(debianRegistry)}`,
    '--config', 'net.offline=true',
  );
} else if (source === 'offline-cache') {
  cargoFlags.push('--offline');
}
log(`crate source: ${source}${source === 'debian' ? ` (${debianRegistry})` : ''}`);

// 4. Build: napi CLI as the cargo driver, plain cargo as the fallback.
function napiCli() {
  try {
    const req = createRequire(join(root, 'package.json'));
    const pkgPath = req.resolve('@napi-rs/cli/package.json');
    const pkg = JSON.parse(readFileSync(pkgPath, 'utf8'));
    const bin = typeof pkg.bin === 'string' ? pkg.bin : pkg.bin?.napi;
    return bin ? join(dirname(pkgPath), bin) : null;
  } catch {
    return null;
  }
}
const outputs = () => readdirSync(crateDir).filter((f) => f.endsWith('.node'));
const mtime = (f) => statSync(join(crateDir, f)).mtimeMs;

let built = null;
const napi = process.env.NATIVE_DRIVER === 'cargo' ? null : napiCli();
if (napi) {
  const args = ['build', '--platform', '--manifest-path', manifest, '--output-dir', crateDir, '--no-js'];
  if (release) args.push('--release');
  log(`napi ${args.join(' ')} -- ${cargoFlags.join(' ')}`);
  const r = run(process.execPath, [napi, ...args, '--', ...cargoFlags]);
  const produced = outputs().filter((f) => f.startsWith('index.') && f !== 'index.node');
  if (r.status === 0 && produced.length > 0) built = join(crateDir, produced.sort((a, b) => mtime(b) - mtime(a))[0]);
  else log(`napi build did not produce an addon (exit ${r.status}); trying cargo directly`);
}
if (!built) {
  const args = ['build', '--manifest-path', manifest, ...(release ? ['--release'] : []), ...cargoFlags];
  log(`cargo ${args.join(' ')}`);
  const r = run('cargo', args);
  if (r.status !== 0) {
    if (source === 'offline-cache') skip('crates.io unreachable and no local crate sources (see NATIVE_CARGO_SOURCE)');
    console.error('[build-native] ERROR: cargo build failed (see above).');
    process.exit(1);
  }
  const dir = join(crateDir, 'target', release ? 'release' : 'debug');
  const lib = ['libnative_crypto.so', 'libnative_crypto.dylib', 'native_crypto.dll'].map((n) => join(dir, n)).find(existsSync);
  if (!lib) {
    console.error(`[build-native] ERROR: no library found in ${dir}`);
    process.exit(1);
  }
  built = join(crateDir, 'index.node');
  copyFileSync(lib, built);
}

// Drop this platform's other, now stale, outputs so the loader cannot pick an old one.
const mine = (f) => f === 'index.node' || f.startsWith(`index.${process.platform}-${process.arch}`);
for (const f of outputs()) if (mine(f) && join(crateDir, f) !== built) rmSync(join(crateDir, f), { force: true });

// 5. Debian's directory source writes `checksum = "Could not get crate checksum"` for some crates;
// drop those lines so the committed Cargo.lock also works against crates.io (cargo fills them in).
if (existsSync(lockFile)) {
  const lock = readFileSync(lockFile, 'utf8');
  const cleaned = lock.replace(/^checksum = "Could not get crate checksum"\n/gm, '');
  if (cleaned !== lock) writeFileSync(lockFile, cleaned);
}

// 6. Smoke test in a child process: the addon loads and hashes correctly.
const smoke = spawnSync(
  process.execPath,
  [
    '-e',
    `const m = require(${JSON.stringify(built)});
     const h = Buffer.from(m.sha256(Buffer.from('abc'))).toString('hex');
     if (h !== 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad') throw new Error('bad sha256 ' + h);
     console.log('threads=' + m.threads());`,
  ],
  { encoding: 'utf8' },
);
if (smoke.status !== 0) {
  console.error(`[build-native] ERROR: built addon ${built} failed to load:\n${smoke.stderr}`);
  process.exit(1);
}
log(`OK: ${built} (${(statSync(built).size / 1024).toFixed(0)} KiB, ${smoke.stdout.trim()})`);
