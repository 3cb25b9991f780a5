import { createBlockHeader } from '@ethereumjs/block';
import { type TypedTxData, createTx, createTxFromRLP } from '@ethereumjs/tx';
import test from 'ava';
import { type BlockEnv, type CallArgs, PARAMS_LOADED, chainCommon } from '../../ts/execution/index.js';
import { evmBlockFor } from '../../ts/execution/vm-factory.js';
import { intrinsicGas, txIntrinsicGas } from '../../ts/execution/call.js';

const a = (b: string): `0x${string}` => `0x${b.repeat(20)}`;

test('intrinsic gas from the Common parameters equals the built transaction', (t) => {
  const cases: CallArgs[] = [
    {},
    { to: a('11') },
    { to: a('11'), data: Buffer.from('70a08231000000000000000000000000ffffffffffffffffffffffffffffffffffffffff', 'hex') },
    { data: Buffer.alloc(100, 7) },
    { data: Buffer.alloc(33) },
    {
      to: a('22'),
      accessList: [
        { address: a('33'), storageKeys: [`0x${'00'.repeat(32)}`, `0x${'01'.repeat(32)}`] },
        { address: a('44'), storageKeys: [] },
      ],
    },
  ];
  for (const hardfork of ['london', 'shanghai', 'cancun', 'prague']) {
    const common = chainCommon(7120, hardfork);
    for (const c of cases) t.is(intrinsicGas(c, common), txIntrinsicGas(c, common), `${hardfork} ${JSON.stringify(c)}`);
  }
});

test('transactions and block headers built with PARAMS_LOADED are those built loading their parameters', (t) => {
  const key = new Uint8Array(32).fill(3);
  const common = chainCommon(7120, 'prague');
  const txs: TypedTxData[] = [
    { type: 0, nonce: 1n, gasLimit: 50_000n, gasPrice: 2n * 10n ** 9n, to: a('11'), value: 5n },
    { type: 1, nonce: 2n, gasLimit: 90_000n, gasPrice: 2n * 10n ** 9n, data: Buffer.alloc(40, 1), accessList: [] },
    {
      type: 2,
      nonce: 3n,
      gasLimit: 120_000n,
      maxFeePerGas: 3n * 10n ** 9n,
      maxPriorityFeePerGas: 10n ** 9n,
      to: a('22'),
      data: Buffer.alloc(36, 9),
      accessList: [{ address: a('33'), storageKeys: [`0x${'01'.repeat(32)}`] }],
    },
  ];
  for (const data of txs) {
    const plain = createTx(data, { common }).sign(key, false);
    const loaded = createTx(data, { common, params: PARAMS_LOADED }).sign(key, false);
    t.is(Buffer.from(loaded.serialize()).toString('hex'), Buffer.from(plain.serialize()).toString('hex'));
    t.is(loaded.getIntrinsicGas(), plain.getIntrinsicGas());
    t.is(loaded.getDataGas(), plain.getDataGas());
    const raw = plain.serialize();
    const decoded = createTxFromRLP(raw, { common, params: PARAMS_LOADED });
    t.is(decoded.getSenderAddress().toString(), createTxFromRLP(raw, { common }).getSenderAddress().toString());
    t.is(decoded.getUpfrontCost(10n ** 9n), plain.getUpfrontCost(10n ** 9n));
  }
  const env = { height: 9, timestamp: 1_700_000_000, chainId: 7120, hardfork: 'prague' } as BlockEnv;
  const header = evmBlockFor(env, common).header;
  const reference = createBlockHeader(
    {
      number: 9n,
      timestamp: 1_700_000_000n,
      coinbase: header.coinbase,
      gasLimit: header.gasLimit,
      baseFeePerGas: header.baseFeePerGas,
    },
    { common, skipConsensusFormatValidation: true },
  );
  t.is(Buffer.from(header.hash()).toString('hex'), Buffer.from(reference.hash()).toString('hex'));
  t.is(header.getBlobGasPrice(), reference.getBlobGasPrice());
});
