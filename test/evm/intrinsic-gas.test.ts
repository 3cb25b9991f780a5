import test from 'ava';
import { type CallArgs, chainCommon } from '../../ts/execution/index.js';
import { intrinsicGas, txIntrinsicGas } from '../../ts/execution/call.js';

const a = (b: string) => `0x${b.repeat(20)}`;

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
