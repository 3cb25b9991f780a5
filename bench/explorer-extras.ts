/**
 * What the explorer bench adds on top of its cached large chain, once (kept in `extras.json` next to the
 * chain): an SRC-20 token deployed as a native operation and transferred to TOKEN_HOLDERS holders, so the
 * token page, its holder and transfer tabs and the holders' address pages are timed on a token with many
 * holders and a long transfer feed.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Chain } from '../ts/chain/chain.js';
import type { KeyPair } from '../ts/ledger/keys.js';
import { tokenContractAddress } from '../ts/ledger/tokens/index.js';
import { type SignedTransaction, signTransaction } from '../ts/ledger/transaction.js';
import { ZERO_ADDRESS } from '../ts/ledger/units.js';
import { type NodeContext, getNonce } from '../ts/services/index.js';
import { recipientAddress } from './explorer-shape.js';

/** Holders of the bench token (each gets one transfer from the deployer). */
export const TOKEN_HOLDERS = 20_000;
/** Token transfers per block while the holders are funded. */
const TRANSFERS_PER_BLOCK = 1000;

export interface TokenExtras {
  token: string;
  holders: number;
  /** Some transfer transactions (for the transaction page). */
  transferTxids: string[];
}

const stringify = (v: unknown): string => JSON.stringify(v, (_k, x) => (typeof x === 'bigint' ? x.toString() : x));

/** A native operation signed by `key` with its next nonce. */
function op(ctx: NodeContext, key: KeyPair, nonce: bigint, body: unknown, fee = 10_000n): SignedTransaction {
  return signTransaction(
    { from: key.address, to: ZERO_ADDRESS, amount: 0n, fee, nonce, data: stringify(body), chain_id: ctx.chain.params.chainId },
    key,
  );
}

async function commit(chain: Chain, txs: SignedTransaction[], validator: KeyPair): Promise<void> {
  const p = await chain.propose(txs, validator, Math.max(chain.head.timestamp, Math.floor(Date.now() / 1000)));
  if (p.result.dropped.length) throw new Error(`dropped: ${p.result.dropped.map((d) => d.reason).join(', ')}`);
  await chain.commit(p);
}

/** The bench token and its holders: read from `extras.json`, or made now (and recorded there). */
export async function ensureTokenExtras(
  ctx: NodeContext,
  cacheDir: string,
  deployer: KeyPair,
  validator: KeyPair,
  log: (s: string) => void,
): Promise<TokenExtras> {
  const file = join(cacheDir, 'extras.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as TokenExtras;
  const t0 = performance.now();
  let nonce = getNonce(ctx, deployer.address);
  const token = tokenContractAddress(deployer.address, nonce);
  await commit(
    ctx.chain,
    [
      op(
        ctx,
        deployer,
        nonce++,
        { Deploy: { name: 'Bench Native Token', symbol: 'BNT', decimals: 6, supply: 10n ** 15n, max_supply: 0n } },
        100_000n,
      ),
    ],
    validator,
  );
  const transferTxids: string[] = [];
  for (let first = 0; first < TOKEN_HOLDERS; first += TRANSFERS_PER_BLOCK) {
    const txs: SignedTransaction[] = [];
    for (let i = first; i < Math.min(TOKEN_HOLDERS, first + TRANSFERS_PER_BLOCK); i++) {
      // Amounts differ so the holder ranking is a real order, not a tie broken by address.
      txs.push(
        op(ctx, deployer, nonce++, {
          Transfer: { contract: token, to: recipientAddress(i), amount: 1_000_000n + BigInt(i) * 7n },
        }),
      );
    }
    await commit(ctx.chain, txs, validator);
    transferTxids.push(...txs.slice(-5).map((t) => t.txid));
  }
  const extras: TokenExtras = { token, holders: TOKEN_HOLDERS, transferTxids };
  writeFileSync(file, JSON.stringify(extras));
  log(`token ${token}: ${TOKEN_HOLDERS} holders funded in ${Math.round((performance.now() - t0) / 1000)} s`);
  return extras;
}
