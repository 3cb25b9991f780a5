import test from 'ava';
import { parseCompactOperation, parseWithLosslessJson } from '../../ts/ledger/operation-json.js';
import { OPERATION_VARIANTS, decodeOperation } from '../../ts/ledger/operations.js';
import { txKind } from '../../ts/ledger/tx-kind.js';
import { ZERO_ADDRESS } from '../../ts/modules/index.js';
import { alice, transfer } from '../helpers/chain-fixture.js';
import { rng } from '../helpers/util.js';

const A = `0x${'ab'.repeat(20)}`;
const TOKEN = `SRC20_${'CD'.repeat(20)}`;
const NFT = `SRC721_${'ef'.repeat(20)}`;

/** One example of every variant (and MintNft with its optional fields). */
const ok: [string, 'token' | 'staking' | 'nft'][] = [
  ['{"Deploy":{"name":"Gold","symbol":"GLD","decimals":8,"supply":1000,"max_supply":0}}', 'token'],
  [`{"Transfer":{"contract":"${TOKEN}","to":"${A}","amount":"340282366920938463463374607431768211455"}}`, 'token'],
  [`{"Burn":{"contract":"${TOKEN}","amount":5}}`, 'token'],
  [`{"Mint":{"contract":"${TOKEN}","to":"${A}","amount":5}}`, 'token'],
  [`{"Approve":{"contract":"${TOKEN}","spender":"${A}","amount":0}}`, 'token'],
  [`{"TransferFrom":{"contract":"${TOKEN}","from":"${A}","to":"${A}","amount":1}}`, 'token'],
  ['{"RegisterValidator":{"name":"v","stake":1500000000000,"commission_bps":500}}', 'staking'],
  [`{"Delegate":{"validator":"${A}","amount":1}}`, 'staking'],
  [`{"Undelegate":{"validator":"${A}","amount":1}}`, 'staking'],
  [`{"Redelegate":{"from_validator":"${A}","to_validator":"${A}","amount":1}}`, 'staking'],
  ['{"ClaimRewards":{"validator":null}}', 'staking'],
  ['{"UpdateCommission":{"commission_bps":10000}}', 'staking'],
  ['{"Unjail":{}}', 'staking'],
  [`{"AddAuthority":{"address":"${A}","public_key":"04${'ab'.repeat(64)}","name":"v5"}}`, 'staking'],
  [
    `{"DeployNft":{"name":"Art","symbol":"ART1","max_supply":0,"royalty_bps":1000,"royalty_recipient":"${A}","base_uri":""}}`,
    'nft',
  ],
  [`{"MintNft":{"collection":"${NFT}","to":"${A}"}}`, 'nft'],
  [`{"MintNft":{"collection":"${NFT}","to":"${A}","token_id":7,"token_uri_override":"ipfs://x"}}`, 'nft'],
  [`{"TransferNft":{"collection":"${NFT}","token_id":1,"to":"${A}"}}`, 'nft'],
  [`{"BurnNft":{"collection":"${NFT}","token_id":1}}`, 'nft'],
  [`{"ApproveNft":{"collection":"${NFT}","token_id":1,"spender":"","expiry_height":0}}`, 'nft'],
  [`{"ApproveNftOperator":{"collection":"${NFT}","operator":"${A}","approved":false}}`, 'nft'],
  [`{"FreezeNftCollection":{"collection":"${NFT}"}}`, 'nft'],
  [`{"UpdateNftBaseUri":{"collection":"${NFT}","base_uri":"https://x/"}}`, 'nft'],
];

test('every variant of the wire format decodes to its family with canonical fields', (t) => {
  t.is(ok.length, Object.keys(OPERATION_VARIANTS).length + 1);
  for (const [data, family] of ok) t.is(decodeOperation(data).family, family, data);
  const tr = decodeOperation(ok[1][0]);
  t.is(tr.fields.amount, (1n << 128n) - 1n);
  t.is(tr.fields.contract, `SRC20_${'cd'.repeat(20)}`);
});

test('strict decoding: duplicate keys, unknown or missing fields, fractions, negatives and oversize integers are errors naming the field', (t) => {
  const bad: [string, RegExp][] = [
    [`{"Burn":{"contract":"${TOKEN}","amount":5,"amount":6}}`, /not valid JSON.*[Dd]uplicate key/],
    [`{"Burn":{"contract":"${TOKEN}","amount":5},"Burn":{}}`, /not valid JSON/],
    [`{"Burn":{"contract":"${TOKEN}","amount":5,"memo":"x"}}`, /invalid Burn operation: unknown field memo/],
    [`{"Burn":{"contract":"${TOKEN}"}}`, /invalid Burn operation: missing field amount/],
    [`{"Burn":{"contract":"${TOKEN}","amount":1.5}}`, /invalid Burn operation: amount must be an integer/],
    [`{"Burn":{"contract":"${TOKEN}","amount":-1}}`, /amount must be an integer from 1/],
    [`{"Burn":{"contract":"${TOKEN}","amount":"0x10"}}`, /amount must be an integer/],
    [
      `{"Burn":{"contract":"${TOKEN}","amount":340282366920938463463374607431768211456}}`,
      /amount must be an integer from 1 to 340282366920938463463374607431768211455/,
    ],
    ['{"Mint":{}, "Burn":{}}', /exactly one key/],
    ['{"Steal":{}}', /unknown operation Steal/],
    ['[1]', /JSON object/],
    ['{"Unjail":[]}', /payload must be an object/],
    [
      `{"DeployNft":{"name":"Art","symbol":"A-1","max_supply":0,"royalty_bps":0,"royalty_recipient":"${A}","base_uri":""}}`,
      /symbol must contain only ASCII letters and digits/,
    ],
    [
      `{"DeployNft":{"name":"Art","symbol":"A","max_supply":0,"royalty_bps":1001,"royalty_recipient":"${A}","base_uri":""}}`,
      /royalty_bps must be an integer from 0 to 1000/,
    ],
    [
      '{"Deploy":{"name":"Gold","symbol":"GLD","decimals":8,"supply":10,"max_supply":5}}',
      /max_supply must be 0 \(uncapped\) or at least supply/,
    ],
    ['{"ClaimRewards":{"validator":"0x12"}}', /validator must be 0x \+ 40 hex characters, or null/],
  ];
  for (const [data, re] of bad) t.throws(() => decodeOperation(data), { message: re }, data);
});

test('transaction kinds are decided once from the fields', (t) => {
  t.is(txKind(transfer(alice, 0n)).kind, 'transfer');
  const op = transfer(alice, 0n, { to: ZERO_ADDRESS, amount: 0n, data: '{"Unjail":{}}' });
  t.is(txKind(op).kind, 'staking');
  const evm = { ...transfer(alice, 0n), public_key: '', data: 'EVM:21000:' };
  t.is(txKind(evm).kind, 'evm');
});

test('the compact-form reader agrees with the full JSON parser on everything it accepts and leaves every other form to it', (t) => {
  const full = (s: string): { value: unknown } | { error: true } => {
    try {
      return { value: parseWithLosslessJson(s) };
    } catch {
      return { error: true };
    }
  };
  const agree = (s: string): boolean => {
    const fast = parseCompactOperation(s);
    if (fast === undefined) return true;
    const f = full(s);
    return (
      'value' in f &&
      JSON.stringify(f.value, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)) ===
        JSON.stringify(fast, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v))
    );
  };
  for (const [data] of ok) {
    t.not(parseCompactOperation(data), undefined, `compact form read directly: ${data}`);
    t.true(agree(data), data);
  }
  const others = [
    ' {"Unjail":{}}',
    '{"Unjail": {}}',
    '{"Burn":{"contract":"a\\u0041","amount":5}}',
    '{"Burn":{"amount":05}}',
    '{"Burn":{"amount":-1}}',
    '{"Burn":{"amount":1e5}}',
    '{"Burn":{"amount":1.0}}',
    '{"Burn":{"amount":5,"amount":6}}',
    '{"__proto__":{"amount":5}}',
    '{"Burn":{"__proto__":5}}',
    '{"Burn":{"a":{"b":1}}}',
    '{"Burn":{"a":[1]}}',
    '{"Burn":{"a":1}}}',
    '{"Burn":{"a":1},}',
    '{"Burn":{"a":1,}}',
    '{"Burn":{"a":nul}}',
    '{"Burn":{"a":truex}}',
    '{"Burn":{"a":"x\ty"}}',
    '{"Burn":{"a":1},"Mint":{}}',
  ];
  for (const s of others) t.true(agree(s), s);
  for (const s of others.slice(0, 18)) t.is(parseCompactOperation(s), undefined, `left to the full parser: ${s}`);
  // Random edits of every example: whatever the reader accepts, the full parser reads the same.
  const random = rng(11);
  const alphabet = '{}[]":,.-+e0123456789aAxn\\ \t_';
  let accepted = 0;
  for (let i = 0; i < 20_000; i++) {
    let s = ok[Math.floor(random() * ok.length)][0];
    for (let k = 1 + Math.floor(random() * 3); k > 0; k--) {
      const at = Math.floor(random() * (s.length + 1));
      const c = alphabet[Math.floor(random() * alphabet.length)];
      const op = random();
      s =
        op < 0.33
          ? s.slice(0, at) + c + s.slice(at)
          : op < 0.66
            ? s.slice(0, at) + s.slice(at + 1)
            : s.slice(0, at) + c + s.slice(at + 1);
    }
    if (parseCompactOperation(s) !== undefined) accepted++;
    if (!agree(s)) t.fail(`disagree on ${s}`);
  }
  t.true(accepted > 1_000, `${accepted} edited inputs read by the compact reader`);
  t.log(`${accepted} of 20,000 edited inputs read by the compact reader, all as the full parser reads them`);
});
