/**
 * The eight SRC-721 operations (docs/nft.md). Each checks every condition before its first write and
 * throws OperationFailed with the reason otherwise; the executor runs it in a sub-transaction of the block overlay, so a
 * failure leaves no change but the fee.
 */
import { id20 } from '../../state/index.js';
import { ZERO_ADDRESS } from '../units.js';
import { type OperationCall, OperationFailed } from '../operation-context.js';
import type { OperationName } from '../operations.js';
import { nftEvent } from './events.js';
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

function fail(message: string): never {
  throw new OperationFailed(message);
}

/** What every NFT operation starts from: the state writer, the sender and the operation's fields. */
interface Ctx {
  nft: NftWriter;
  call: OperationCall;
  sender: Raw20;
  f: Record<string, unknown>;
  height: number;
}

function collectionMeta(ctx: Ctx): { c: Raw20; text: string; meta: Buffer } {
  const text = ctx.f.collection as string;
  const c = rawCollectionId(text);
  const meta = ctx.nft.metaRaw(c) ?? fail(`unknown collection ${text}`);
  return { c, text, meta };
}

function liveToken(ctx: Ctx, c: Raw20, text: string): { id: bigint; tok: TokenRecord } {
  const id = ctx.f.token_id as bigint;
  const tok = ctx.nft.token(c, id);
  if (!tok || tok.burned) fail(`token ${id} does not exist in collection ${text}`);
  return { id, tok };
}

function recipient(ctx: Ctx, what: string): Raw20 {
  const to = ctx.f.to as string;
  if (to === ZERO_ADDRESS) fail(`cannot ${what} to the zero address${what === 'transfer' ? ': use BurnNft' : ''}`);
  return rawId(to);
}

function deploy(ctx: Ctx): void {
  const { f, call } = ctx;
  const address = collectionAddress(call.tx.from_address, call.tx.nonce);
  const c = rawCollectionId(address);
  if (ctx.nft.metaRaw(c)) fail(`collection ${address} already exists`);
  ctx.nft.putMeta(
    c,
    encodeMeta({
      deployer: ctx.sender,
      royaltyRecipient: rawAddress(f.royalty_recipient as string),
      maxSupply: f.max_supply as bigint,
      createdHeight: ctx.height,
      royaltyBps: Number(f.royalty_bps),
      frozen: false,
      name: f.name as string,
      symbol: f.symbol as string,
      baseUri: f.base_uri as string,
    }),
  );
  const index = ctx.nft.nextCollectionIndex();
  ctx.nft.putCounters(c, { totalMinted: 0n, totalBurned: 0n, autoCursor: 1n, index });
  call.emit(
    nftEvent('CollectionDeployed', {
      collection: address,
      deployer: call.tx.from_address,
      name: f.name as string,
      symbol: f.symbol as string,
      base_uri: f.base_uri as string,
    }),
  );
}

/**
 * Automatic id: the smallest id >= total_minted + 1 not taken (by a live or burned token). Ids never
 * become free (burned ids are not reused), so every id between the previous automatic start and its
 * cursor is still taken and the search resumes at the cursor: each id is passed over at most once.
 */
function allocateId(ctx: Ctx, c: Raw20, counters: CollectionCounters): bigint {
  let id = counters.totalMinted + 1n;
  if (counters.autoCursor > id) id = counters.autoCursor;
  while (ctx.nft.tokenExists(c, id)) {
    if (id === MAX_TOKEN_ID) fail('no token id left in this collection');
    id++;
  }
  counters.autoCursor = id === MAX_TOKEN_ID ? id : id + 1n;
  return id;
}

function mint(ctx: Ctx): void {
  const { c, text, meta } = collectionMeta(ctx);
  if (metaFrozen(meta)) fail(`collection ${text} is frozen: no more tokens can be minted`);
  const deployer = metaDeployer(meta);
  if (ctx.sender !== deployer && !ctx.nft.isOperator(c, deployer, ctx.sender)) {
    fail('only the collection deployer or an operator it approved may mint');
  }
  const counters = ctx.nft.counters(c) ?? fail('NFT state: collection counters missing');
  const max = metaMaxSupply(meta);
  if (max > 0n && counters.totalMinted >= max) fail(`max supply reached: ${max} tokens minted`);
  const to = recipient(ctx, 'mint');
  let id: bigint;
  if (ctx.f.token_id === undefined) id = allocateId(ctx, c, counters);
  else {
    id = ctx.f.token_id as bigint;
    const taken = ctx.nft.token(c, id);
    if (taken) fail(taken.burned ? `token id ${id} was burned and cannot be reused` : `token id ${id} already exists`);
  }
  counters.totalMinted++;
  ctx.nft.putCounters(c, counters);
  const uri = ctx.f.token_uri_override as string | undefined;
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
    nftEvent('Minted', { collection: text, token_id: id.toString(), to: ctx.f.to as string, minter: ctx.call.tx.from_address }),
  );
}

function transfer(ctx: Ctx): void {
  const text = ctx.f.collection as string;
  const c = rawCollectionId(text);
  const id = ctx.f.token_id as bigint;
  const key = tokenKey(c, id); // read and written: built once
  const raw = ctx.nft.state.get(key);
  // A token implies its collection: the collection is looked up only to say which is missing.
  if (!raw || tokenBurned(raw)) {
    collectionMeta(ctx);
    fail(`token ${id} does not exist in collection ${text}`);
  }
  // The sender's own token (the usual case) is recognised in place, without reading the owner out.
  const bySender = tokenOwnedBy(raw, ctx.sender);
  const owner = bySender ? ctx.sender : tokenOwner(raw);
  const allowed = bySender || tokenLiveSpender(raw, ctx.height) === ctx.sender || ctx.nft.isOperator(c, owner, ctx.sender);
  if (!allowed) fail('not allowed: the sender is not the owner, an approved spender or an operator of the owner');
  ctx.nft.state.set(key, transferredToken(raw, recipient(ctx, 'transfer'), ctx.height));
  ctx.call.emit(
    nftEvent('Transferred', {
      collection: text,
      token_id: id.toString(),
      // The sender's own token: its canonical text is the transaction's from_address.
      from: bySender ? ctx.call.tx.from_address : addressText(owner),
      to: ctx.f.to as string,
    }),
  );
}

function burn(ctx: Ctx): void {
  const { c, text } = collectionMeta(ctx);
  const { id, tok } = liveToken(ctx, c, text);
  if (ctx.sender !== tok.owner) fail('only the owner may burn a token');
  const counters = ctx.nft.counters(c) ?? fail('NFT state: collection counters missing');
  counters.totalBurned++;
  ctx.nft.putCounters(c, counters);
  // The record stays (its id is never reused) without what only a live token needs.
  ctx.nft.putToken(c, id, { ...tok, burned: true, spender: null, expiry: 0n, uri: null });
  ctx.call.emit(nftEvent('Burned', { collection: text, token_id: id.toString(), owner: ctx.call.tx.from_address }));
}

function approve(ctx: Ctx): void {
  const { c, text } = collectionMeta(ctx);
  const { id, tok } = liveToken(ctx, c, text);
  const owner = tok.owner;
  if (ctx.sender !== owner && !ctx.nft.isOperator(c, owner, ctx.sender)) {
    fail('only the owner or an operator of the owner may approve a spender for a token');
  }
  const spenderText = ctx.f.spender as string;
  const expiry = ctx.f.expiry_height as bigint;
  if (spenderText === '') {
    tok.spender = null;
    tok.expiry = 0n;
  } else {
    const spender = rawAddress(spenderText);
    if (spender === owner) fail('the owner cannot be approved for its own token');
    if (spender === ZERO) fail('spender must not be the zero address: use "" to revoke');
    if (expiry !== 0n && expiry <= BigInt(ctx.height)) {
      fail(`expiry_height must be 0 (no expiry) or above the current height ${ctx.height}`);
    }
    tok.spender = spender;
    tok.expiry = expiry;
  }
  ctx.nft.putToken(c, id, tok);
  ctx.call.emit(
    nftEvent('Approved', {
      collection: text,
      token_id: id.toString(),
      owner: addressText(owner),
      spender: spenderText,
      expiry_height: spenderText === '' ? '0' : expiry.toString(),
    }),
  );
}

function setOperator(ctx: Ctx): void {
  const { c, text } = collectionMeta(ctx);
  const operatorText = ctx.f.operator as string;
  const operator = rawAddress(operatorText);
  if (operator === ctx.sender) fail('an address cannot be its own operator');
  const approved = ctx.f.approved as boolean;
  ctx.nft.setOperator(c, ctx.sender, operator, approved);
  ctx.call.emit(
    nftEvent('OperatorApprovalChanged', {
      collection: text,
      owner: ctx.call.tx.from_address,
      operator: operatorText,
      approved: String(approved),
    }),
  );
}

function deployerOnly(ctx: Ctx, what: string): { c: Raw20; text: string; meta: Buffer } {
  const found = collectionMeta(ctx);
  if (metaDeployer(found.meta) !== ctx.sender) fail(`only the collection deployer may ${what}`);
  return found;
}

function freeze(ctx: Ctx): void {
  const { c, text, meta } = deployerOnly(ctx, 'freeze it');
  if (metaFrozen(meta)) fail(`collection ${text} is already frozen`);
  ctx.nft.putMeta(c, encodeMeta({ ...decodeMeta(meta), frozen: true }));
  ctx.call.emit(nftEvent('CollectionFrozen', { collection: text }));
}

function updateBaseUri(ctx: Ctx): void {
  const { c, text, meta } = deployerOnly(ctx, 'update its base URI');
  if (metaFrozen(meta)) fail(`collection ${text} is frozen: its base URI can no longer change`);
  const baseUri = ctx.f.base_uri as string;
  ctx.nft.putMeta(c, encodeMeta({ ...decodeMeta(meta), baseUri }));
  ctx.call.emit(nftEvent('BaseUriUpdated', { collection: text, new_base_uri: baseUri }));
}

const HANDLERS: Partial<Record<OperationName, (ctx: Ctx) => void>> = {
  DeployNft: deploy,
  MintNft: mint,
  TransferNft: transfer,
  BurnNft: burn,
  ApproveNft: approve,
  ApproveNftOperator: setOperator,
  FreezeNftCollection: freeze,
  UpdateNftBaseUri: updateBaseUri,
};

/** Apply one NFT operation (the module's OperationHandler). */
export function applyNftOperation(call: OperationCall): void {
  const handler = HANDLERS[call.op.name as OperationName] ?? fail(`${call.op.name} is not an NFT operation`);
  handler({
    nft: new NftWriter(call.state),
    call,
    sender: rawId(call.tx.from_address),
    f: call.op.fields,
    height: call.env.height,
  });
}
