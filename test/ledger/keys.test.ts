import { HDKey } from '@scure/bip32';
import { generateMnemonic, mnemonicToSeedSync } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import test from 'ava';
import { DEV_MNEMONIC, keyPairFromMnemonic, keyPairFromPrivate, randomKeyPair } from '../../ts/ledger/keys.js';

/** The reference path: scure's BIP-39 seed and the full BIP-32 path from the root. */
function reference(mnemonic: string, index: number): string {
  const child = HDKey.fromMasterSeed(mnemonicToSeedSync(mnemonic)).derive(`m/44'/60'/0'/0/${index}`);
  return keyPairFromPrivate(child.privateKey as Uint8Array).address;
}

test('the dev mnemonic gives the Hardhat/Anvil accounts', (t) => {
  t.is(keyPairFromMnemonic(DEV_MNEMONIC, 0).address, '0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
  t.is(keyPairFromMnemonic(DEV_MNEMONIC, 1).address, '0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
  t.is(keyPairFromMnemonic(DEV_MNEMONIC, 2).address, '0x3c44cdddb6a900fa2b585dd299e03d12fa4293bc');
  t.is(keyPairFromMnemonic(`  ${DEV_MNEMONIC.replaceAll(' ', '\n ')} `, 1).address, '0x70997970c51812dc3a010c7d01b50e0d17dc79c8');
});

test('keys of mnemonics used in turn equal the reference derivation (the cached seed follows the phrase)', (t) => {
  const phrases = [generateMnemonic(wordlist), DEV_MNEMONIC, generateMnemonic(wordlist, 256)];
  for (const round of [0, 1]) {
    for (const phrase of phrases) {
      for (const index of [0, 7, 1000 + round]) t.is(keyPairFromMnemonic(phrase, index).address, reference(phrase, index));
    }
  }
});

test("public keys (OpenSSL) equal @noble's; invalid secret keys and account indexes are refused", (t) => {
  for (let i = 0; i < 50; i++) {
    const k = randomKeyPair();
    t.deepEqual(Buffer.from(k.publicKey), Buffer.from(secp256k1.getPublicKey(k.privateKey, false)));
  }
  const edge = keyPairFromPrivate(`${'f'.repeat(62)}00`.replace(/^ff/, 'ee'));
  t.deepEqual(Buffer.from(edge.publicKey), Buffer.from(secp256k1.getPublicKey(edge.privateKey, false)));
  t.throws(() => keyPairFromPrivate('00'.repeat(32)), { message: 'invalid private key' });
  t.throws(() => keyPairFromPrivate('ff'.repeat(32)), { message: 'invalid private key' });
  for (const index of [-1, 1.5, 2 ** 31])
    t.throws(() => keyPairFromMnemonic(DEV_MNEMONIC, index), { message: /invalid account index/ });
});

test('an invalid mnemonic is refused, also right after a valid one', (t) => {
  keyPairFromMnemonic(DEV_MNEMONIC, 0);
  t.throws(() => keyPairFromMnemonic('test test test', 0), { message: 'invalid mnemonic' });
  t.throws(() => keyPairFromMnemonic(`${DEV_MNEMONIC} extra`, 0), { message: 'invalid mnemonic' });
});
