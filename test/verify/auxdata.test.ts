import test from 'ava';
import { auxdataRegionsByDiff, decodeAuxdata, hasMetadataHash, trailingAuxdata } from '../../ts/verify/auxdata.js';
import type { CompiledContract } from '../../ts/verify/compile-task.js';
import { BytecodeMismatchError } from '../../ts/verify/errors.js';
import { matchCreation, matchRuntime } from '../../ts/verify/match.js';

// solc 0.8.37's auxdata: { ipfs: <34 bytes>, solc: 0x000825 } and its length (0x0033).
const IPFS = `1220${'ab'.repeat(32)}`;
const AUX = `a264697066735822${IPFS}64736f6c63430008250033`;
const AUX2 = AUX.replace('abab', 'cdcd');
// With `metadata.bytecodeHash: none`: { solc: 0x000825 } only.
const AUX_NO_HASH = 'a164736f6c634300082500' + '0a';

test('decodeAuxdata reads the CBOR map solc appends; hasMetadataHash needs ipfs or bzzr', (t) => {
  t.deepEqual(decodeAuxdata(AUX), { ipfs: IPFS, solc: '000825' });
  t.true(hasMetadataHash(AUX));
  t.deepEqual(decodeAuxdata(AUX_NO_HASH), { solc: '000825' });
  t.false(hasMetadataHash(AUX_NO_HASH));
  t.is(decodeAuxdata('ff0001'), null);
  t.is(decodeAuxdata(`${AUX.slice(0, -10)}0033`), null, 'truncated');
});

test('trailingAuxdata finds the auxdata at the end only when it is one the compiler reported', (t) => {
  const code = `6080604052${AUX}`;
  t.deepEqual(trailingAuxdata(code, [AUX]), { offset: 5, value: AUX });
  t.is(trailingAuxdata(code, [AUX2]), null);
  t.is(trailingAuxdata('00', [AUX]), null);
});

test('auxdataRegionsByDiff: only regions that changed with the sources count, not a constant equal to an auxdata', (t) => {
  // The code embeds AUX as a constant (unchanged in the edited compilation) and carries it for real at the end.
  const original = `60${AUX}56${AUX}`;
  const edited = `60${AUX}56${AUX2}`;
  const regions = auxdataRegionsByDiff(original, edited, [AUX], [AUX2]);
  t.deepEqual(regions, [{ offset: 1 + AUX.length / 2 + 1, value: AUX }]);
});

function compiledWith(runtime: string, auxOffset: number, extra: Partial<CompiledContract['runtime']> = {}): CompiledContract {
  return {
    abi: [],
    metadata: '{}',
    creation: { object: `6080${runtime}`, linkReferences: {}, auxdata: [{ offset: 2 + auxOffset, value: AUX }] },
    runtime: {
      object: runtime,
      linkReferences: {},
      immutableReferences: {},
      auxdata: [{ offset: auxOffset, value: AUX }],
      ...extra,
    },
  };
}

test('matchRuntime: perfect, partial (other auxdata), immutables taken from the deployed code, mismatch offset', (t) => {
  const body = '6001600255';
  const c = compiledWith(`${body}${AUX}`, 5);
  t.is(matchRuntime(c, `${body}${AUX}`).match, 'perfect');
  t.is(matchRuntime(c, `${body}${AUX2}`).match, 'partial');
  const err = t.throws(() => matchRuntime(c, `6001600355${AUX}`), { instanceOf: BytecodeMismatchError });
  t.is(err!.offset, 3);
  t.regex(err!.message, /byte offset 3 of the runtime code \(both 58 bytes\)/);
  t.throws(() => matchRuntime(c, `${body}`), { message: /offset 5 .*recompiled 58 bytes, deployed 5 bytes/ });

  // An immutable (bytes 1..2) is zero in the compiled code, set in the deployed code.
  const imm = compiledWith(`610000${AUX}`, 3, { immutableReferences: { '7': [{ start: 1, length: 2 }] } });
  const m = matchRuntime(imm, `61abcd${AUX}`);
  t.is(m.match, 'perfect');
  t.deepEqual(m.immutables, { '7': '0xabcd' });
});

test('matchCreation: the input tail after the creation code is the constructor arguments', (t) => {
  const c = compiledWith(`6001${AUX}`, 2);
  const args = `${'00'.repeat(31)}2a`;
  t.deepEqual(matchCreation(c, `6080${'6001'}${AUX}${args}`), {
    match: 'perfect',
    libraryMap: {},
    constructorArguments: `0x${args}`,
  });
  t.is(matchCreation(c, `6080${'6001'}${AUX2}`)?.match, 'partial');
  t.is(matchCreation(c, `6080${'6002'}${AUX}`), null);
  t.is(matchCreation(c, '6080'), null);
});
