/** Schemas of the resources several routes share (spec "Resources and their fields"). */
import { type JsonSchema, address, amount, arr, bool, hash, int, literal, nullable, num, obj, str } from './schema.js';

export const heightParam: JsonSchema = int('block height', { maximum: Number.MAX_SAFE_INTEGER });
export const txidParam: JsonSchema = str('txid: 64 hex, with or without 0x', { pattern: '^(0x)?[0-9a-fA-F]{64}$' });
export const contractParam: JsonSchema = str('token contract: SRC20_ + 40 hex', { pattern: '^SRC20_[0-9a-fA-F]{40}$' });
export const addressParam: JsonSchema = address();

// Query parameters of the paginated lists.
export const pageQuery = (def: number, max: number): Record<string, JsonSchema> => ({
  page: int('0-based page number (offset = page * limit)'),
  limit: int(`page size, default ${def}, at most ${max} (larger values are clamped)`, { minimum: 1 }),
});
export const offsetQuery = (def: number, max: number): Record<string, JsonSchema> => ({
  limit: int(`page size, default ${def}, at most ${max} (larger values are clamped)`, { minimum: 1 }),
  offset: int('items to skip, default 0'),
  page: int('alternative to offset: offset = page * limit (not both)'),
});

export const block: JsonSchema = obj({
  index: int('block height'),
  hash: hash(),
  previous_hash: hash(),
  timestamp: int('Unix seconds'),
  tx_count: int(),
  validator: address('proposer'),
  merkle_root: hash(),
  state_root: hash(),
  receipts_root: str('sha256 of the block receipts (64 hex; empty for version-0 blocks)'),
  round: int(),
  has_justification: bool(),
  consensus: str('PoA, DPoS or DPoS+BFT', { enum: ['PoA', 'DPoS', 'DPoS+BFT'] }),
});

export const signedTransaction: JsonSchema = obj({
  txid: str('hex of the signing digest'),
  from_address: address(),
  to_address: address(),
  amount: amount(),
  fee: amount(),
  nonce: int(),
  data: str('empty for a native transfer; JSON token operation for token endpoints'),
  timestamp: int('Unix seconds'),
  chain_id: int(),
  signature: str('128 hex (compact ECDSA)'),
  public_key: str('130 hex (uncompressed secp256k1, leading 04)'),
});

export const blockDetail: JsonSchema = {
  ...block,
  properties: {
    ...block.properties,
    transactions: arr(signedTransaction),
    evidence: arr(
      obj({
        id: hash('sha256 of the evidence encoding'),
        validator: address(),
        height: int(),
        round: int(),
        type: int('1 prevote, 2 precommit'),
        block_hashes: arr(str()),
      }),
      'DPoS+BFT blocks only: double-sign evidence the block includes (each slashes its validator)',
    ),
  },
  required: [...(block.required ?? []), 'transactions'],
};

const txViewProps: Record<string, JsonSchema> = {
  ...signedTransaction.properties,
  status: str(undefined, { enum: ['confirmed', 'pending_in_mempool'] }),
  block_index: nullable(int()),
  block_hash: nullable(hash()),
  block_timestamp: nullable(int('Unix seconds of the including block')),
  tx_index: nullable(int('position in the block')),
  confirmations: int(),
};
export const txView: JsonSchema = obj(txViewProps);

export const historyPage: JsonSchema = obj({
  address: address(),
  transactions: arr(obj({ ...txViewProps, direction: str('relative to address', { enum: ['out', 'in', 'self'] }) })),
  total: int('transactions touching the address, all time'),
  limit: int(),
  offset: int(),
  page: int(),
});

export const submitBody: JsonSchema = obj({ transaction: obj(signedTransaction.properties ?? {}) }, { closed: true });

export const accepted: JsonSchema = obj({
  success: { type: 'boolean', const: true },
  txid: str(),
  status: literal('pending_in_mempool'),
});

export const coverage: JsonSchema = obj(
  { from_height: int(), to_height: int(), complete: bool('the index reaches genesis') },
  { description: 'blocks folded into the aggregates (the index backfills at most 10,000 older blocks per request)' },
);

export const holder: JsonSchema = obj({
  rank: int(),
  address: address(),
  balance: amount(),
  percentage: num('percent of circulating supply'),
});
export const holdersList: JsonSchema = obj({
  holders: arr(holder),
  total_accounts: int('accounts in state, zero balances included'),
  circulating_supply: amount(),
});

export const epochHeader: Record<string, JsonSchema> = {
  epoch_number: int(),
  start_height: int(),
  end_height: int(),
};

export const errorBody: JsonSchema = obj({ success: { type: 'boolean', const: false }, error: str() });
export const rateLimitBody: JsonSchema = obj({ error: literal('rate limit exceeded'), limit: int(), window_secs: int() });
