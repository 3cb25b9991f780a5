import { join } from 'node:path';
import test from 'ava';
import { runWallet } from '../../ts/cli/wallet.js';
import { DEV_MNEMONIC, keyPairFromMnemonic } from '../../ts/ledger/index.js';
import { httpJson, startTestNode } from '../helpers/node.js';

test('wallet nft: deploy, mint, transfer, approve, operator, burn, base-uri, freeze, show; failures reported', async (t) => {
  const n = await startTestNode({ blockTimeMs: 200 });
  t.teardown(n.stop);
  const keys = [join(n.dataDir, 'a.json'), join(n.dataDir, 'b.json')];
  const [a, b] = [keyPairFromMnemonic(DEV_MNEMONIC, 3), keyPairFromMnemonic(DEV_MNEMONIC, 4)];
  const lines: string[] = [];
  const run = (key: number, ...argv: string[]) => {
    lines.length = 0;
    return runWallet([...argv, '--url', n.url, '--key-file', keys[key], '--timeout', '20'], {}, (l) => lines.push(l));
  };
  t.is(await run(0, 'import', '--mnemonic', DEV_MNEMONIC, '--index', '3'), 0);
  t.is(await run(1, 'import', '--mnemonic', DEV_MNEMONIC, '--index', '4'), 0);

  t.is(
    await run(0, 'nft', 'deploy', '--name', 'Wallet Art', '--symbol', 'WART', '--max-supply', '10', '--base-uri', 'ipfs://w'),
    0,
    lines.join('\n'),
  );
  const c = lines.find((l) => l.startsWith('collection: '))?.slice(12) as string;
  t.regex(c, /^SRC721_[0-9a-f]{40}$/);
  t.regex(lines.at(-1) ?? '', /^included in block \d+; fee paid 0\.001 NATIVE$/, 'a deploy costs 10x MIN_TX_FEE');

  t.is(await run(0, 'nft', 'mint', '--collection', c), 0, lines.join('\n'));
  t.true(lines.includes('token id: 1'));
  t.is(await run(0, 'nft', 'mint', '--collection', c, '--to', b.address, '--token-id', '7', '--uri', 'ar://seven'), 0);
  t.true(lines.includes('token id: 7'));
  t.is(await run(0, 'nft', 'transfer', '--collection', c, '--token-id', '1', '--to', b.address), 0, lines.join('\n'));
  t.is(await run(1, 'nft', 'approve', '--collection', c, '--token-id', '7', '--spender', a.address), 0, lines.join('\n'));
  t.regex(lines.at(-1) ?? '', /fee paid 0\.00005 NATIVE$/, 'an approval costs 0.5x MIN_TX_FEE');
  t.is(await run(1, 'nft', 'operator', '--collection', c, '--operator', a.address), 0);
  t.is(await run(0, 'nft', 'transfer', '--collection', c, '--token-id', '7', '--to', a.address), 0, 'as the approved spender');
  t.is(await run(1, 'nft', 'operator', '--collection', c, '--operator', a.address, '--revoke'), 0);
  t.is(await run(1, 'nft', 'burn', '--collection', c, '--token-id', '1'), 0);
  t.is(await run(0, 'nft', 'base-uri', '--collection', c, '--base-uri', 'ipfs://w2/'), 0);
  t.is(await run(0, 'nft', 'freeze', '--collection', c), 0);

  t.is(await run(0, 'nft', 'show', c), 0);
  t.true(lines.some((l) => /^frozen\s+true$/.test(l)));
  t.true(lines.some((l) => /^total_burned\s+1$/.test(l)));
  t.is(await run(0, 'nft', 'show', c, '7'), 0);
  t.true(lines.some((l) => l.startsWith('owner') && l.endsWith(a.address)));
  t.true(lines.some((l) => /^token_uri\s+ar:\/\/seven$/.test(l)));
  t.is(await run(0, 'nft', 'show', a.address), 0);
  t.deepEqual(lines, ['1 tokens', `${c} #7 ar://seven`]);
  t.is(await run(0, 'nft', 'show', c, '1'), 1);
  t.deepEqual(lines, ['not found']);

  // Refused at admission: the node's reason, exit code 1, nothing in the pool.
  t.is(await run(1, 'nft', 'mint', '--collection', c), 1);
  t.regex(lines[0], /^rejected \(400\): Invalid transaction: collection .* is frozen/);
  t.is((await httpJson(`${n.url}/mempool`)).body.size, 0);
  // Usage errors never reach the node.
  await t.throwsAsync(run(0, 'nft', 'transfer', '--collection', c, '--to', b.address), { message: /needs --token-id/ });
  await t.throwsAsync(run(0, 'nft', 'deploy', '--name', 'x', '--symbol', 'bad-symbol'), { message: /symbol/ });
  await t.throwsAsync(run(0, 'nft', 'mint', '--collection', 'SRC20_00'), { message: /SRC721_/ });
  await t.throwsAsync(run(0, 'nft', 'fly'), { message: /unknown nft command fly/ });
});
