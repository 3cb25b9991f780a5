/** View models of the rows and links pages share (blocks, transactions, addresses); every value pre-formatted. */
import type { Block, HistoryEntry, TokenTransfer, TxView } from '../services/index.js';
import type { TxSummary } from './read-model.js';
import { type TimeView, coins, coinsWei, gas, int, short, time } from './format.js';
import { links } from './links.js';

export interface AddrView {
  value: string;
  label: string;
  href: string | null;
}

/** An address shown short and linked to its page; `name` (e.g. a validator's) replaces the short form. */
export const addrView = (address: string | null, name?: string): AddrView =>
  address === null
    ? { value: 'contract creation', label: 'contract creation', href: null }
    : { value: address, label: name ?? short(address, 8), href: links.address(address) };

export interface BlockRow {
  href: string;
  heightText: string;
  time: TimeView;
  proposer: AddrView;
  txCount: string;
  gasUsed: string;
  hash: string;
  hashShort: string;
}

export function blockRow(b: Block, names: ReadonlyMap<string, string>): BlockRow {
  return {
    href: links.block(b.index),
    heightText: int(b.index),
    time: time(b.timestamp),
    proposer: b.index === 0 ? { value: 'genesis', label: 'genesis', href: null } : proposerView(b.validator, names),
    txCount: int(b.tx_count),
    gasUsed: gas(b.gas_used),
    hash: b.hash,
    hashShort: short(b.hash, 10),
  };
}

/** A validator address linked to its validator page, labelled with its name. */
export const proposerView = (address: string, names: ReadonlyMap<string, string>): AddrView => ({
  value: address,
  label: names.get(address) ?? short(address, 8),
  href: names.has(address) ? links.validator(address) : links.address(address),
});

export interface TxRow {
  txid: string;
  txidShort: string;
  href: string;
  height: string;
  blockHref: string | null;
  time: TimeView | null;
  kind: string;
  direction: string | null;
  from: AddrView;
  to: AddrView;
  value: string;
  fee: string;
  failed: boolean;
}

/** The family a transaction's kind starts with (the standard's name for token and NFT operations). */
const KIND_FAMILY: Record<string, string> = { token: 'SRC-20', nft: 'SRC-721', staking: 'Staking' };

/** An operation's name as words: "TransferFrom" -> "transfer from"; "Nft" is already the family's ("MintNft" -> "mint"). */
const actionWords = (name: string): string =>
  name
    .split(/(?=[A-Z])/)
    .filter((w) => w !== 'Nft')
    .join(' ')
    .toLowerCase();

/**
 * How a transaction's kind reads everywhere (lists, the transaction page): one scheme, "<family> <action>", the
 * family Coin, EVM, SRC-20, SRC-721 or Staking: "Coin transfer", "EVM contract call", "SRC-20 deploy",
 * "SRC-721 mint", "Staking delegate".
 */
export function kindLabel(s: TxSummary): string {
  if (s.kind === 'evm') return s.to === null ? 'EVM contract creation' : s.input === '0x' ? 'EVM transfer' : 'EVM contract call';
  if (s.op) return `${KIND_FAMILY[s.op.family] ?? s.op.family} ${actionWords(s.op.name)}`;
  return s.kind === 'transfer' ? 'Coin transfer' : s.kind;
}

export function txRow(v: TxView | HistoryEntry, s: TxSummary): TxRow {
  return {
    txid: v.txid,
    txidShort: short(v.txid, 10),
    href: links.tx(v.txid),
    height: v.block_index === null ? '' : int(v.block_index),
    blockHref: v.block_index === null ? null : links.block(v.block_index),
    time: v.block_timestamp === null ? null : time(v.block_timestamp),
    kind: kindLabel(s),
    direction: 'direction' in v ? v.direction : null,
    from: addrView(v.from_address),
    to: addrView(s.kind === 'evm' ? s.to : v.to_address),
    value: coinsWei(s.valueWei),
    fee: s.feeWei === null ? coins(v.fee) : coinsWei(s.feeWei),
    failed: s.status === 'failed',
  };
}

export interface PagerView {
  page: number;
  pages: string | null;
  prev: string | null;
  next: string | null;
}

/** A row of a token transfer feed; `amount` is already in the token's units. */
export const transferRow = (x: TokenTransfer, amount: string) => ({
  href: links.tx(x.txid),
  txShort: short(x.txid, 10),
  txid: x.txid,
  block: { href: links.block(x.block_index), text: int(x.block_index) },
  time: time(x.timestamp),
  kind: x.kind,
  from: addrView(x.from),
  to: addrView(x.to),
  amount,
});
