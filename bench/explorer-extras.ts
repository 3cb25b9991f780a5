/**
 * What the explorer bench adds on top of its cached large chain, once (kept in `extras.json` and
 * `extras-nft.json` next to the chain): an SRC-20 token deployed as a native operation and transferred to
 * TOKEN_HOLDERS holders, and an SRC-721 collection of NFT_TOKENS tokens minted to NFT_HOLDERS holders (some
 * moved again), so token, collection and NFT pages, their tabs and the holders' address pages are timed on
 * entities with many holders and long event feeds.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Chain } from '../ts/chain/chain.js';
import { type KeyPair, keyPairFromPrivate } from '../ts/ledger/keys.js';
import { collectionAddress, tokenContractAddress } from '../ts/modules/index.js';
import { type SignedTransaction, signTransaction } from '../ts/ledger/transaction.js';
import { ZERO_ADDRESS } from '../ts/modules/kit/units.js';
import { type NodeContext, getNonce } from '../ts/services/index.js';

/** The bench's context: the concrete chain, which it extends with blocks of its own, behind the read interface. */
export type BenchContext = NodeContext & { chain: Chain };
import { recipientAddress } from './explorer-shape.js';

/** Holders of the bench token (each gets one transfer from the deployer). */
export const TOKEN_HOLDERS = 20_000;
/** Token transfers or NFT mints per block while the holders are funded. */
const OPS_PER_BLOCK = 1000;
/** NFTs of the bench collection, their holders (token i goes to holder i mod NFT_HOLDERS) and transfers after the mints. */
export const NFT_TOKENS = 10_000;
export const NFT_HOLDERS = 5_000;
export const NFT_TRANSFERS = 1_000;

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
  ctx: BenchContext,
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
  for (let first = 0; first < TOKEN_HOLDERS; first += OPS_PER_BLOCK) {
    const txs: SignedTransaction[] = [];
    for (let i = first; i < Math.min(TOKEN_HOLDERS, first + OPS_PER_BLOCK); i++) {
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

export interface NftExtras {
  collection: string;
  tokens: number;
  holders: number;
  /** Some mint transactions (for the transaction page). */
  mintTxids: string[];
}

/** Holder `i` of the bench collection: a key, so some of them can move their tokens. */
export const nftHolderKey = (i: number): KeyPair => keyOf(0x0ff1_0000 + i);
const keyOf = (n: number): KeyPair => keyPairFromPrivate(n.toString(16).padStart(64, '0'));

/** The bench collection: read from `extras-nft.json`, or made now (and recorded there). */
export async function ensureNftExtras(
  ctx: BenchContext,
  cacheDir: string,
  deployer: KeyPair,
  validator: KeyPair,
  log: (s: string) => void,
): Promise<NftExtras> {
  const file = join(cacheDir, 'extras-nft.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as NftExtras;
  const t0 = performance.now();
  let nonce = getNonce(ctx, deployer.address);
  const collection = collectionAddress(deployer.address, nonce);
  await commit(
    ctx.chain,
    [
      op(
        ctx,
        deployer,
        nonce++,
        {
          DeployNft: {
            name: 'Bench Collection',
            symbol: 'BNFT',
            max_supply: 0n,
            royalty_bps: 500n,
            royalty_recipient: deployer.address,
            base_uri: 'ipfs://bench/',
          },
        },
        100_000n,
      ),
      // The holders that move a token pay its fee.
      ...Array.from({ length: NFT_TRANSFERS }, (_, i) =>
        signTransaction(
          {
            from: deployer.address,
            to: nftHolderKey(i).address,
            amount: 1_000_000n,
            fee: 10_000n,
            nonce: nonce++,
            chain_id: ctx.chain.params.chainId,
          },
          deployer,
        ),
      ),
    ],
    validator,
  );
  const mintTxids: string[] = [];
  for (let first = 1; first <= NFT_TOKENS; first += OPS_PER_BLOCK) {
    const txs: SignedTransaction[] = [];
    for (let id = first; id < Math.min(NFT_TOKENS + 1, first + OPS_PER_BLOCK); id++) {
      const to = nftHolderKey((id - 1) % NFT_HOLDERS).address;
      txs.push(op(ctx, deployer, nonce++, { MintNft: { collection, to, token_id: BigInt(id) } }));
    }
    await commit(ctx.chain, txs, validator);
    mintTxids.push(...txs.slice(-5).map((t) => t.txid));
  }
  // Holder i (i < NFT_TRANSFERS) passes token i + 1 to the next holder: a token history of two events.
  const moves = Array.from({ length: NFT_TRANSFERS }, (_, i) =>
    op(ctx, nftHolderKey(i), getNonce(ctx, nftHolderKey(i).address), {
      TransferNft: { collection, token_id: BigInt(i + 1), to: nftHolderKey((i + 1) % NFT_HOLDERS).address },
    }),
  );
  await commit(ctx.chain, moves, validator);
  const extras: NftExtras = { collection, tokens: NFT_TOKENS, holders: NFT_HOLDERS, mintTxids };
  writeFileSync(file, JSON.stringify(extras));
  log(
    `collection ${collection}: ${NFT_TOKENS} tokens to ${NFT_HOLDERS} holders in ${Math.round((performance.now() - t0) / 1000)} s`,
  );
  return extras;
}
