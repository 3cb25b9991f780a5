/**
 * The eight SRC-721 handlers (docs/nft.md; Cosmos `keeper/msg_server.go`). Each checks every condition
 * before its first write and throws one of errors.ts otherwise; the executor runs it in a sub-transaction of
 * the block overlay, so a failure leaves no change but the fee.
 */
import { id20 } from '../../state/index.js';
import type { OperationCall } from '../kit/context.js';
import type { Handler, HandlerMap } from '../kit/module.js';
import { ZERO_ADDRESS } from '../kit/units.js';
import {
  AlreadyFrozen,
  CollectionExists,
  CollectionFrozen,
  CountersMissing,
  ExpiryNotAhead,
  MaxSupplyReached,
  NoTokenIdLeft,
  NotApprover,
  NotDeployer,
  NotMinter,
  NotNftOwner,
  SelfApproval,
  SelfOperator,
  TokenIdBurned,
  TokenIdTaken,
  TransferNotAllowed,
  UnknownCollection,
  UnknownNftToken,
  ZeroRecipient,
  ZeroSpender,
} from './errors.js';
import { NFT_EVENTS, nftEvent } from './events.js';
import { COLLECTION_PREFIX, type Raw20, addressText, collectionAddress, rawAddress, tokenKey } from './keys.js';
import {
  type CollectionCounters,
  decodeMeta,
  encodeMeta,
  metaDeployer,
  metaFrozen,
  metaMaxSupply,
  type TokenRecord,
  tokenBurned,
  tokenLiveSpender,
  tokenOwnedBy,
  tokenOwner,
  transferredToken,
} from './records.js';
import type { NFT_OPERATIONS, NftMessage } from './operations.js';
import { NftWriter } from './store.js';

const MAX_TOKEN_ID = (1n << 64n) - 1n;
const ZERO: Raw20 = '\0'.repeat(20);

/**
 * Raw20 of an address or collection the operation decoder (or the transaction rules, for the sender)
 * has checked to be its prefix and 40 hex digits: the cached conversion of state/key-ids.ts, equal to
 * rawAddress / rawCollection for such text (the hottest operations convert three per transaction).
 */
const rawId = (address: string): Raw20 => id20(address);
const rawCollectionId = (collection: string): Raw20 => id20(collection, COLLECTION_PREFIX.length);

/** What every NFT operation starts from: the state writer, the sender and the operation's typed message. */
interface Ctx<M> {
  nft: NftWriter;
  call: OperationCall<M>;
  sender: Raw20;
  f: M;
  height: number;
}

function collectionMeta(ctx: Ctx<{ collection: string }>): { c: Raw20; text: string; meta: Buffer } {
  const text = ctx.f.collection;
  const c = rawCollectionId(text);
  const meta = ctx.nft.metaRaw(c);
  if (!meta) throw new UnknownCollection(text);
  return { c, text, meta };
}

function countersOf(ctx: Ctx<unknown>, c: Raw20): CollectionCounters {
  const counters = ctx.nft.counters(c);
  if (!counters) throw new CountersMissing();
  return counters;
}

function liveToken(ctx: Ctx<{ token_id: bigint }>, c: Raw20, text: string): { id: bigint; tok: TokenRecord } {
  const id = ctx.f.token_id;
  const tok = ctx.nft.token(c, id);
  if (!tok || tok.burned) throw new UnknownNftToken(id, text);
  return { id, tok };
}

function recipient(ctx: Ctx<{ to: string }>, what: 'mint' | 'transfer'): Raw20 {
  const to = ctx.f.to;
  if (to === ZERO_ADDRESS) throw new ZeroRecipient(what);
  return rawId(to);
}

function deploy(ctx: Ctx<NftMessage<'DeployNft'>>): void {
  const { f, call } = ctx;
  const address = collectionAddress(call.tx.from_address, call.tx.nonce);
  const c = rawCollectionId(address);
  if (ctx.nft.metaRaw(c)) throw new CollectionExists(address);
  ctx.nft.putMeta(
    c,
    encodeMeta({
      deployer: ctx.sender,
      royaltyRecipient: rawAddress(f.royalty_recipient),
      maxSupply: f.max_supply,
      createdHeight: ctx.height,
      royaltyBps: Number(f.royalty_bps),
      frozen: false,
      name: f.name,
      symbol: f.symbol,
      baseUri: f.base_uri,
    }),
  );
  const index = ctx.nft.nextCollectionIndex();
  ctx.nft.putCounters(c, { totalMinted: 0n, totalBurned: 0n, autoCursor: 1n, index });
  call.emit(
    nftEvent(NFT_EVENTS.collectionDeployed, {
      collection: address,
      deployer: call.tx.from_address,
      name: f.name,
      symbol: f.symbol,
      base_uri: f.base_uri,
    }),
  );
}

/**
 * Automatic id: the smallest id >= total_minted + 1 not taken (by a live or burned token). Ids never
 * become free (burned ids are not reused), so every id between the previous automatic start and its
 * cursor is still taken and the search resumes at the cursor: each id is passed over at most once.
 */
function allocateId(ctx: Ctx<unknown>, c: Raw20, counters: CollectionCounters): bigint {
  let id = counters.totalMinted + 1n;
  if (counters.autoCursor > id) id = counters.autoCursor;
  while (ctx.nft.tokenExists(c, id)) {
    if (id === MAX_TOKEN_ID) throw new NoTokenIdLeft();
    id++;
  }
  counters.autoCursor = id === MAX_TOKEN_ID ? id : id + 1n;
  return id;
}

function mint(ctx: Ctx<NftMessage<'MintNft'>>): void {
  const { c, text, meta } = collectionMeta(ctx);
  if (metaFrozen(meta)) throw new CollectionFrozen(text, 'no more tokens can be minted');
  const deployer = metaDeployer(meta);
  if (ctx.sender !== deployer && !ctx.nft.isOperator(c, deployer, ctx.sender)) throw new NotMinter();
  const counters = countersOf(ctx, c);
  const max = metaMaxSupply(meta);
  if (max > 0n && counters.totalMinted >= max) throw new MaxSupplyReached(max);
  const to = recipient(ctx, 'mint');
  let id: bigint;
  if (ctx.f.token_id === undefined) id = allocateId(ctx, c, counters);
  else {
    id = ctx.f.token_id;
    const taken = ctx.nft.token(c, id);
    if (taken) throw taken.burned ? new TokenIdBurned(id) : new TokenIdTaken(id);
  }
  counters.totalMinted++;
  ctx.nft.putCounters(c, counters);
  const uri = ctx.f.token_uri_override;
  ctx.nft.putToken(c, id, {
    owner: to,
    mintedHeight: ctx.height,
    lastTransferHeight: ctx.height,
    burned: false,
    spender: null,
    expiry: 0n,
    uri: uri ? uri : null,
  });
  ctx.call.emit(
    nftEvent(NFT_EVENTS.minted, { collection: text, token_id: id.toString(), to: ctx.f.to, minter: ctx.call.tx.from_address }),
  );
}

function transfer(ctx: Ctx<NftMessage<'TransferNft'>>): void {
  const text = ctx.f.collection;
  const c = rawCollectionId(text);
  const id = ctx.f.token_id;
  const key = tokenKey(c, id); // read and written: built once
  const raw = ctx.nft.state.get(key);
  // A token implies its collection: the collection is looked up only to say which is missing.
  if (!raw || tokenBurned(raw)) {
    collectionMeta(ctx);
    throw new UnknownNftToken(id, text);
  }
  // The sender's own token (the usual case) is recognised in place, without reading the owner out.
  const bySender = tokenOwnedBy(raw, ctx.sender);
  const owner = bySender ? ctx.sender : tokenOwner(raw);
  const allowed = bySender || tokenLiveSpender(raw, ctx.height) === ctx.sender || ctx.nft.isOperator(c, owner, ctx.sender);
  if (!allowed) throw new TransferNotAllowed();
  ctx.nft.state.set(key, transferredToken(raw, recipient(ctx, 'transfer'), ctx.height));
  ctx.call.emit(
    nftEvent(NFT_EVENTS.transferred, {
      collection: text,
      token_id: id.toString(),
      // The sender's own token: its canonical text is the transaction's from_address.
      from: bySender ? ctx.call.tx.from_address : addressText(owner),
      to: ctx.f.to,
    }),
  );
}

function burn(ctx: Ctx<NftMessage<'BurnNft'>>): void {
  const { c, text } = collectionMeta(ctx);
  const { id, tok } = liveToken(ctx, c, text);
  if (ctx.sender !== tok.owner) throw new NotNftOwner();
  const counters = countersOf(ctx, c);
  counters.totalBurned++;
  ctx.nft.putCounters(c, counters);
  // The record stays (its id is never reused) without what only a live token needs.
  ctx.nft.putToken(c, id, { ...tok, burned: true, spender: null, expiry: 0n, uri: null });
  ctx.call.emit(nftEvent(NFT_EVENTS.burned, { collection: text, token_id: id.toString(), owner: ctx.call.tx.from_address }));
}

function approve(ctx: Ctx<NftMessage<'ApproveNft'>>): void {
  const { c, text } = collectionMeta(ctx);
  const { id, tok } = liveToken(ctx, c, text);
  const owner = tok.owner;
  if (ctx.sender !== owner && !ctx.nft.isOperator(c, owner, ctx.sender)) throw new NotApprover();
  const spenderText = ctx.f.spender;
  const expiry = ctx.f.expiry_height;
  if (spenderText === '') {
    tok.spender = null;
    tok.expiry = 0n;
  } else {
    const spender = rawAddress(spenderText);
    if (spender === owner) throw new SelfApproval();
    if (spender === ZERO) throw new ZeroSpender();
    if (expiry !== 0n && expiry <= BigInt(ctx.height)) throw new ExpiryNotAhead(ctx.height);
    tok.spender = spender;
    tok.expiry = expiry;
  }
  ctx.nft.putToken(c, id, tok);
  ctx.call.emit(
    nftEvent(NFT_EVENTS.approved, {
      collection: text,
      token_id: id.toString(),
      owner: addressText(owner),
      spender: spenderText,
      expiry_height: spenderText === '' ? '0' : expiry.toString(),
    }),
  );
}

function setOperator(ctx: Ctx<NftMessage<'ApproveNftOperator'>>): void {
  const { c, text } = collectionMeta(ctx);
  const operatorText = ctx.f.operator;
  const operator = rawAddress(operatorText);
  if (operator === ctx.sender) throw new SelfOperator();
  const approved = ctx.f.approved;
  ctx.nft.setOperator(c, ctx.sender, operator, approved);
  ctx.call.emit(
    nftEvent(NFT_EVENTS.operatorApprovalChanged, {
      collection: text,
      owner: ctx.call.tx.from_address,
      operator: operatorText,
      approved: String(approved),
    }),
  );
}

function deployerOnly(ctx: Ctx<{ collection: string }>, what: string): { c: Raw20; text: string; meta: Buffer } {
  const found = collectionMeta(ctx);
  if (metaDeployer(found.meta) !== ctx.sender) throw new NotDeployer(what);
  return found;
}

function freeze(ctx: Ctx<NftMessage<'FreezeNftCollection'>>): void {
  const { c, text, meta } = deployerOnly(ctx, 'freeze it');
  if (metaFrozen(meta)) throw new AlreadyFrozen(text);
  ctx.nft.putMeta(c, encodeMeta({ ...decodeMeta(meta), frozen: true }));
  ctx.call.emit(nftEvent(NFT_EVENTS.collectionFrozen, { collection: text }));
}

function updateBaseUri(ctx: Ctx<NftMessage<'UpdateNftBaseUri'>>): void {
  const { c, text, meta } = deployerOnly(ctx, 'update its base URI');
  if (metaFrozen(meta)) throw new CollectionFrozen(text, 'its base URI can no longer change');
  const baseUri = ctx.f.base_uri;
  ctx.nft.putMeta(c, encodeMeta({ ...decodeMeta(meta), baseUri }));
  ctx.call.emit(nftEvent(NFT_EVENTS.baseUriUpdated, { collection: text, new_base_uri: baseUri }));
}

/** A handler over the operation's context (the state writer, the sender as raw bytes, the typed message). */
const handler =
  <M>(apply: (ctx: Ctx<M>) => void): Handler<M> =>
  (call) =>
    apply({
      nft: new NftWriter(call.state),
      call,
      sender: rawId(call.tx.from_address),
      f: call.op.fields,
      height: call.env.height,
    });

export const NFT_HANDLERS: HandlerMap<typeof NFT_OPERATIONS> = {
  DeployNft: handler(deploy),
  MintNft: handler(mint),
  TransferNft: handler(transfer),
  BurnNft: handler(burn),
  ApproveNft: handler(approve),
  ApproveNftOperator: handler(setOperator),
  FreezeNftCollection: handler(freeze),
  UpdateNftBaseUri: handler(updateBaseUri),
};
