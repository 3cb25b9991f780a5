import { spawn } from 'node:child_process';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { formatBase, formatWei, parseAmount } from '../../ts/cli/amounts.js';
import { runWallet } from '../../ts/cli/wallet.js';
import { DEV_MNEMONIC, keyPairFromMnemonic, BASE_PER_COIN } from '../../ts/ledger/index.js';
import { httpJson, startTestNode } from '../helpers/node.js';

const WALLET = fileURLToPath(new URL('../../ts/cli/wallet.js', import.meta.url));

/** A local port nothing listens on (taken from the OS, then released). */
function closedPortUrl(): Promise<string> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as AddressInfo;
      srv.close(() => resolve(`http://127.0.0.1:${port}`));
    });
  });
}

/** The wallet binary run to its end. */
function runBinary(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const proc = spawn(process.execPath, [WALLET, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => {
    stdout += d.toString();
  });
  proc.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  return new Promise((resolve) => proc.on('close', (code) => resolve({ code, stdout, stderr })));
}

test('wallet: import from mnemonic, send, included, balances in coins (base units with --raw), fee paid, proof verifies offline', async (t) => {
  const n = await startTestNode({ blockTimeMs: 1000 });
  t.teardown(n.stop);
  const keyFile = join(n.dataDir, 'wallet.json');
  const lines: string[] = [];
  const run = (...argv: string[]) => runWallet([...argv, '--url', n.url, '--key-file', keyFile], {}, (l) => lines.push(l));
  t.is(await run('import', '--mnemonic', DEV_MNEMONIC, '--index', '3'), 0);
  const me = keyPairFromMnemonic(DEV_MNEMONIC, 3).address;
  lines.length = 0;
  t.is(await run('address'), 0);
  t.is(lines[0], me);
  lines.length = 0;
  t.is(await run('balance'), 0);
  t.is(lines[0], '10,000 NATIVE');
  const dest = '0x000000000000000000000000000000000000beef';
  lines.length = 0;
  t.is(await run('send', '--to', dest, '--amount', '250000000', '--fee', '30000', '--timeout', '10'), 0, lines.join('\n'));
  const txid = lines[0].replace('txid: ', '');
  t.regex(lines[1], /^included in block \d+; fee paid 0\.0003 NATIVE$/);
  t.is(BigInt((await httpJson(`${n.url}/accounts/${dest}/balance`)).body.balance), 250_000_000n);
  lines.length = 0;
  t.is(await run('balance', '--raw'), 0);
  t.is(BigInt(lines[0]), 10_000n * BASE_PER_COIN - 250_000_000n - 30_000n);
  lines.length = 0;
  t.is(await run('balance'), 0);
  t.is(lines[0], '9,997.4997 NATIVE');
  lines.length = 0;
  t.is(await run('send', '--to', dest, '--amount', '0.5NATIVE', '--timeout', '10'), 0, lines.join('\n'));
  t.regex(lines[1], /fee paid 0\.0001 NATIVE$/);
  lines.length = 0;
  t.is(await run('nonce'), 0);
  t.is(lines[0], '2');
  lines.length = 0;
  t.is(await run('tx', txid), 0);
  t.deepEqual(
    lines.map((l) => l.split(/\s+/)[0]),
    ['txid', 'status', 'from', 'to', 'amount', 'nonce', 'fee'],
  );
  t.regex(lines[1], /^status +confirmed in block \d+/);
  t.is(lines[4], 'amount    2.5 NATIVE');
  t.is(lines[6], 'fee paid  0.0003 NATIVE');
  lines.length = 0;
  t.is(await run('tx', txid, '--raw'), 0);
  t.is(lines[6], 'fee paid  30000');
  lines.length = 0;
  t.is(await run('tx', txid, '--json'), 0);
  t.regex(lines[0], /"status":"confirmed"/);
  lines.length = 0;
  t.is(await run('proof'), 0, lines.join('\n'));
  t.is(lines[1], 'balance 9,996.9996 NATIVE nonce 2');
  t.is(lines.at(-1), 'proof: VALID');
  lines.length = 0;
  t.is(await run('proof', '0x00000000000000000000000000000000000000aa'), 1);
  t.regex(lines[0], /does not exist/);
});

test('wallet: an unreachable node is named with its URL and the cause; bad amounts get a plain message', async (t) => {
  const url = await closedPortUrl();
  const out: string[] = [];
  const err = await t.throwsAsync(
    runWallet(['balance', '0x000000000000000000000000000000000000beef', '--url', url], {}, (l) => out.push(l)),
  );
  t.is(err?.message, `cannot reach ${url}: connection refused — is the node running?`);
  const to = ['--to', '0x000000000000000000000000000000000000beef', '--url', url, '--key-file', '/nonexistent'];
  for (const [amount, message] of [
    ['-5', '--amount must not be negative, got "-5"'],
    ['--amount=-5', '--amount must not be negative, got "-5"'],
    ['0', '--amount must be greater than zero, got "0"'],
    ['1.5', '--amount must be a whole number of base units or coins such as 1.5NATIVE, got "1.5"'],
    ['0.000000001NATIVE', '--amount has more than 8 decimals (1 base unit = 0.00000001 NATIVE), got "0.000000001NATIVE"'],
  ] as const) {
    const args = amount.startsWith('--') ? ['send', amount, ...to] : ['send', '--amount', amount, ...to];
    const e = await t.throwsAsync(runWallet(args, {}, () => undefined));
    t.is(e?.message, message, amount);
  }
});

test('amounts: coins with thousands separators and every significant digit; parsing coins and base units', (t) => {
  t.is(formatBase(1_000_150_000_000n), '10,001.5 NATIVE');
  t.is(formatBase(0n), '0 NATIVE');
  t.is(formatBase(1n), '0.00000001 NATIVE');
  t.is(formatBase(123_456_789_012_345_678n), '1,234,567,890.12345678 NATIVE');
  t.is(formatWei(10n ** 18n + 1n), '1.000000000000000001 NATIVE');
  t.is(parseAmount('amount', '150000000'), 150_000_000n);
  t.is(parseAmount('amount', '1.5NATIVE'), 150_000_000n);
  t.is(parseAmount('amount', '2 native'), 200_000_000n);
  t.is(parseAmount('fee', '0', true), 0n);
  t.throws(() => parseAmount('amount', '-1'), { message: '--amount must not be negative, got "-1"' });
});

test('native-wallet binary: --help exits 0, --version, no command exits 2, errors without a stack trace', async (t) => {
  const help = await runBinary(['--help']);
  t.is(help.code, 0);
  t.regex(help.stdout, /^native-wallet <command>/);
  const version = await runBinary(['--version']);
  t.is(version.code, 0);
  t.regex(version.stdout, /^native-wallet \d+\.\d+\.\d+\n$/);
  t.is((await runBinary([])).code, 2);
  const neg = await runBinary(['send', '--to', '0x000000000000000000000000000000000000beef', '--amount', '-5']);
  t.is(neg.code, 2);
  t.is(neg.stderr, 'error: --amount must not be negative, got "-5"\n');
  const url = await closedPortUrl();
  const down = await runBinary(['balance', '0x000000000000000000000000000000000000beef', '--url', url]);
  t.is(down.code, 1);
  t.is(down.stderr, `error: cannot reach ${url}: connection refused — is the node running?\n`);
});

test('wallet: token and stake commands with human-readable amounts; validators and delegations', async (t) => {
  const n = await startTestNode({ blockTimeMs: 100 });
  t.teardown(n.stop);
  const lines: string[] = [];
  const as =
    (i: number) =>
    async (...argv: string[]) => {
      lines.length = 0;
      const keyFile = join(n.dataDir, `wallet-${i}.json`);
      await runWallet(['import', '--mnemonic', DEV_MNEMONIC, '--index', String(i), '--key-file', keyFile], {}, () => {});
      return runWallet([...argv, '--url', n.url, '--key-file', keyFile, '--timeout', '20'], {}, (l) => lines.push(l));
    };
  const [w4, w5, w6] = [as(4), as(5), as(6)];
  const a4 = keyPairFromMnemonic(DEV_MNEMONIC, 4).address;
  const a5 = keyPairFromMnemonic(DEV_MNEMONIC, 5).address;
  t.is(
    await w4('token', 'deploy', '--name', 'Gold', '--symbol', 'GLD', '--decimals', '2', '--supply', '1000.5'),
    0,
    lines.join('\n'),
  );
  const contract = (await httpJson(`${n.url}/tokens`)).body.tokens[0].contract;
  // The deploy printed the new token's address, as `nft deploy` prints its collection.
  t.true(lines.includes(`contract: ${contract}`), lines.join('\n'));
  t.is((await httpJson(`${n.url}/tokens/${contract}`)).body.supply, 100_050);
  t.is(await w4('token', 'transfer', '--contract', contract, '--to', a5, '--amount', '1.25'), 0, lines.join('\n'));
  t.is((await httpJson(`${n.url}/tokens/${contract}/balance/${a5}`)).body.balance, 125);
  t.is(await w5('token', 'burn', '--contract', contract, '--amount', '0.25'), 0, lines.join('\n'));
  t.is(await w4('token', 'approve', '--contract', contract, '--spender', a5, '--amount', '2'), 0, lines.join('\n'));
  t.is(await w4('token', 'mint', '--contract', contract, '--to', a4, '--amount', '1'), 0, lines.join('\n'));
  t.is(await w5('token', 'mint', '--contract', contract, '--to', a5, '--amount', '1'), 1, 'not the deployer');
  t.regex(lines.join('\n'), /only the deployer/);
  await t.throwsAsync(w4('token', 'transfer', '--contract', contract, '--to', a5, '--amount', '1.255'), {
    message: /more than 2 decimals/,
  });
  // Staking: 6 funds 4 above the 15,000-coin minimum, 4 registers, 5 delegates 100.5 coins.
  t.is(await w6('send', '--to', a4, '--amount', '6000NATIVE'), 0, lines.join('\n'));
  t.is(await w4('stake', 'register', '--name', 'four', '--amount', '15000', '--commission', '500'), 0, lines.join('\n'));
  t.is(await w5('stake', 'delegate', '--validator', a4, '--amount', '100.5'), 0, lines.join('\n'));
  t.is(await w5('delegations'), 0);
  t.regex(lines[0], new RegExp(`^${a4} four +100\\.5 NATIVE pending reward`));
  t.is(await w5('validators'), 0);
  t.true(
    lines.some((l) => l.startsWith(a4) && l.includes('stake 15,100.5 NATIVE') && l.includes('commission 5.00%')),
    lines.join('\n'),
  );
  t.is(await w4('stake', 'commission', '--commission', '700'), 1, 'a change above 100 bps is refused');
  t.regex(lines.join('\n'), /commission change too large/);
  t.is(await w5('stake', 'undelegate', '--validator', a4, '--amount', '0.5'), 0, lines.join('\n'));
});
