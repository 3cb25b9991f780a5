/**
 * How a chain comes up (Chain.open): resumed from disk (the head block, the state trie from its checkpoint or
 * the `S` table, the dev chain's writes made since the head) or, on an empty store, started with its genesis block.
 */
import { encodeReceipts } from '../execution/index.js';
import { StateOverlay, type StateStore } from '../state/index.js';
import { toHex } from '../util/index.js';
import {
  type Block,
  type BlockHeader,
  type ConsensusData,
  EMPTY_BLOOM_HEX,
  HEADER_VERSION,
  blockHash,
  receiptsRootOf,
  txMerkleRoot,
} from './block.js';
import type { BlockStore } from './block-store.js';
import type { PendingDevWrites } from './dev-patches.js';
import { applyGenesisAlloc, finishGenesis, streamGenesisAlloc } from './genesis-state.js';
import type { ChainParams } from './params.js';
import { type TrieStart, openStateTrie } from './trie-checkpoint.js';

/** Consensus data of a block outside BFT (and of genesis): none. */
export const NO_CONSENSUS_DATA: ConsensusData = { last_commit: new Uint8Array(0), evidence: [] };

/**
 * Open the store: resume from disk (the trie rebuilt from the `S` table or a checkpoint, no value kept in memory,
 * and checked against the head's state root) or write genesis. Returns the head and how the trie came back.
 */
export async function openChainStore(
  params: ChainParams,
  blocks: BlockStore,
  state: StateStore,
  devWrites: PendingDevWrites | null,
  checkpointPath: string | null,
): Promise<{ head: Block; trieStart: TrieStart }> {
  const t0 = performance.now();
  const height = await blocks.open();
  if (height < 0) {
    const head = await writeGenesis(params, blocks, state);
    return { head, trieStart: { from: 'genesis', ms: performance.now() - t0 } };
  }
  const head = (await blocks.getBlock(height)) as Block;
  const trieStart = await openStateTrie(state, blocks, head, checkpointPath, t0);
  await devWrites?.restore(state);
  return { head, trieStart };
}

/** The genesis allocation applied to the state and committed with the genesis block, which is returned. */
async function writeGenesis(params: ChainParams, blocks: BlockStore, state: StateStore): Promise<Block> {
  const streamed = await streamGenesisAlloc(params, blocks.db, state);
  const overlay = new StateOverlay(state);
  if (streamed === null) applyGenesisAlloc(params, overlay);
  else finishGenesis(params, overlay, streamed);
  const undo = state.applyChanges(overlay.changes);
  const block = genesisBlock(params, toHex(state.root()));
  await blocks.commit(block, overlay.changes, [], undefined, undo);
  state.markDurable(overlay.changes);
  return block;
}

/** The genesis block over the genesis state's root. */
function genesisBlock(params: ChainParams, stateRoot: string): Block {
  const header: BlockHeader = {
    version: HEADER_VERSION,
    index: 0,
    previous_hash: '0'.repeat(64),
    timestamp: params.genesisTimestamp,
    tx_count: 0,
    validator: `0x${'0'.repeat(40)}`,
    merkle_root: txMerkleRoot([]),
    state_root: stateRoot,
    receipts_root: receiptsRootOf(encodeReceipts([])),
    round: 0,
    gas_used: 0n,
    logs_bloom: EMPTY_BLOOM_HEX,
    consensus: 'PoA',
    last_commit_hash: '',
    evidence_hash: '',
  };
  return {
    ...header,
    hash: blockHash(header),
    signature: '',
    justification: new Uint8Array(0),
    transactions: [],
    ...NO_CONSENSUS_DATA,
  };
}
