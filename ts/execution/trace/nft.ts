/**
 * native_traceTransaction of an SRC-721 operation: the operation re-applied on the state before it,
 * with the sender's account, the collection's counters and the token (or operator approval) it
 * touched, before and after, its status (a failed operation: status 0 and the reason, nothing changed
 * but the fee), its events and the fee split. Bounded: one collection and one token, so a trace stays
 * under 5 KB (each URI appears once, for the operation that sets it).
 */
import { type CollectionInfo, NftReads, type TokenInfo, collectionAddress } from '../../modules/index.js';
import { applyNativeTransaction, type SignedTransaction, txKind, weiToBase } from '../../ledger/index.js';
import { getAccount, StateOverlay, type StateReader } from '../../state/index.js';
import { operationEnv } from '../block-executor.js';
import { type TraceSite, applyUntraced, blockStart, runSync } from './run.js';

type CollectionView = Pick<CollectionInfo, 'total_minted' | 'total_burned' | 'total_supply' | 'frozen'> &
  Partial<Pick<CollectionInfo, 'base_uri'>>;

function collectionView(info: CollectionInfo | null, withUri: boolean): CollectionView | null {
  if (!info) return null;
  const { total_minted, total_burned, total_supply, frozen, base_uri } = info;
  return { total_minted, total_burned, total_supply, frozen, ...(withUri ? { base_uri } : {}) };
}

function tokenView(info: TokenInfo | null, withUri: boolean): Record<string, unknown> | null {
  if (!info) return null;
  const { owner, approval, minted_height, last_transfer_height, token_uri_override } = info;
  return { owner, approval, minted_height, last_transfer_height, ...(withUri ? { token_uri_override } : {}) };
}

const account = (state: StateReader, address: string) => {
  const a = getAccount(state, address);
  return { balance_base: weiToBase(a.balance), nonce: a.nonce };
};

/** The collection, token and operator an operation is about (a deploy's collection is derived). */
function subjectOf(tx: SignedTransaction, op: { name: string; fields: Record<string, unknown> }) {
  const collection = op.name === 'DeployNft' ? collectionAddress(tx.from_address, tx.nonce) : (op.fields.collection as string);
  const tokenId = op.fields.token_id as bigint | undefined;
  const operator = op.name === 'ApproveNftOperator' ? (op.fields.operator as string) : undefined;
  return { collection, tokenId, operator };
}

export async function traceNftOperation(site: TraceSite, tx: SignedTransaction): Promise<Record<string, unknown>> {
  const kind = txKind(tx);
  if (kind.kind !== 'nft') throw new Error('not an NFT operation');
  const op = kind.op;
  const state = blockStart(site);
  await applyUntraced(site.env, state, site.store, site.prefix, site.deadline);
  const { collection, tokenId, operator } = subjectOf(tx, op);
  const height = site.env.height;
  // URIs (up to 512 characters) appear once: the old base URI before an update (the event carries the
  // new one, as a deploy's event carries its first), a mint's override after it.
  const withBaseUri = op.name === 'UpdateNftBaseUri';
  const withTokenUri = op.name === 'MintNft';
  let id = tokenId;
  const view = (s: StateReader, before: boolean) => {
    const reads = new NftReads(s, height);
    const out: Record<string, unknown> = { collection: collectionView(reads.collection(collection), withBaseUri && before) };
    if (id !== undefined) out.token = tokenView(reads.token(collection, id), withTokenUri && !before);
    if (operator !== undefined) {
      out.operator_approved = reads.isOperator(collection, tx.from_address, operator);
    }
    return out;
  };
  // Reads and the operation run whole again in a worker when they missed a state key (runSync).
  const preSender = await runSync(site.store, () => account(state, tx.from_address));
  const pre = await runSync(site.store, () => view(state, true));
  const { child, outcome } = await runSync(site.store, () => {
    const child = new StateOverlay(state);
    return { child, outcome: applyNativeTransaction(child, tx, operationEnv(site.env)) };
  });
  if ('dropped' in outcome) throw new Error(`re-execution of block ${height} diverged: ${outcome.dropped}`);
  state.absorb(child);
  // An automatic mint's id is known once it ran: the token did not exist before.
  if (id === undefined && op.name === 'MintNft' && outcome.status === 1) {
    id = BigInt(outcome.events[0].fields.token_id);
    pre.token = null;
  }
  const toValidator = tx.fee / 2n;
  const postSender = await runSync(site.store, () => account(state, tx.from_address));
  const post = await runSync(site.store, () => view(state, false));
  return {
    op: op.name,
    txid: tx.txid,
    from: tx.from_address,
    collection,
    ...(id !== undefined ? { token_id: id } : {}),
    status: outcome.status,
    ...(outcome.status === 0 ? { failure: outcome.failure } : {}),
    fee_base: tx.fee,
    pre_state: { sender: preSender, ...pre },
    post_state: { sender: postSender, ...post },
    fee_split: { burned_base: tx.fee - toValidator, validator_base: toValidator, validator: site.env.proposer },
    events: outcome.events.map((e) => ({ type: e.type, ...e.fields })),
  };
}
