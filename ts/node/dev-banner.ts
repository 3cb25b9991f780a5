/**
 * What `--dev` prints on a terminal once it serves, as anvil and `hardhat node` do: the funded accounts with
 * their private keys, the mnemonic, the chain id, the hardfork and the URLs to use. Only on a terminal: piped
 * or redirected output stays the JSON log lines it always was.
 */
import { DEV_MNEMONIC, keyPairFromMnemonic, privateKeyHex, WEI_PER_COIN } from '../ledger/index.js';
import type { NodeContext } from '../services/index.js';
import { devChainOf } from '../dev/index.js';
import { getAccount } from '../state/index.js';

/** Whether the banner is printed: the dev chain, on a terminal. */
export const showsDevBanner = (network: string, out: { isTTY?: boolean }): boolean => network === 'dev' && out.isTTY === true;

/** The banner's text for a dev chain serving at `url` (its WebSocket URL too when `ws`). */
export function devBanner(ctx: NodeContext, url: string, ws: boolean): string {
  const count = devChainOf(ctx)?.accounts.addresses().length ?? 0;
  const keys = Array.from({ length: count }, (_, i) => keyPairFromMnemonic(DEV_MNEMONIC, i));
  const coins = (address: string): string => {
    const wei = getAccount(ctx.chain.state, address).balance;
    return `${wei / WEI_PER_COIN} coins`;
  };
  const lines = [
    '',
    'Available accounts',
    '==================',
    ...keys.map((k, i) => `(${i}) ${k.address} (${coins(k.address)})`),
    '',
    'Private keys',
    '============',
    ...keys.map((k, i) => `(${i}) 0x${privateKeyHex(k)}`),
    '',
    'Wallet',
    '======',
    `Mnemonic:        ${DEV_MNEMONIC}`,
    "Derivation path: m/44'/60'/0'/0/",
    '',
    `Chain ID: ${ctx.chain.params.chainId}`,
    `EVM hardfork: ${ctx.chain.params.evmHardfork}`,
    '',
    `Listening on ${url} (JSON-RPC: ${url}/rpc${ws ? `, WebSocket: ${url.replace(/^http/, 'ws')}/rpc` : ''})`,
    '',
  ];
  return `${lines.join('\n')}\n`;
}
