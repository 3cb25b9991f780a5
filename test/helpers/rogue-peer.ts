/**
 * A misbehaving peer for the network tests: a real libp2p host (the node's own P2PNetwork, a fresh node
 * key) that passes the chain handshake and then gossips whatever a test hands it — malformed bytes,
 * oversized messages, forged votes, blocks that break a rule — so the test can watch the node drop it.
 */
import { randomBytes } from 'node:crypto';
import { pino } from 'pino';
import {
  type Block,
  EMPTY_BLOOM_HEX,
  blockHash,
  decodeBlock,
  encodeBlock,
  evidenceHash,
  headerOf,
  lastCommitHash,
  receiptsRootOf,
  txMerkleRoot,
  PRECOMMIT,
  encodeJustification,
  voteDigest,
} from '../../ts/chain/index.js';
import { encodeReceipts } from '../../ts/execution/index.js';
import { type KeyPair, signDigest } from '../../ts/ledger/index.js';
import { P2PNetwork, peerIdOfNodeKey, type GossipTopic } from '../../ts/network/index.js';
import { fromHex, toHex } from '../../ts/util/index.js';

export interface RoguePeer {
  net: P2PNetwork;
  peerId: string;
  stop(): Promise<void>;
}

/**
 * Connect a fresh peer (a new node key) to `target` (multiaddrs with /p2p/<id>) on the given chain. It
 * relays nothing it receives (every message is IGNOREd), so it is never a path between the nodes;
 * `observe` sees every gossip message delivered to it.
 */
export async function startRoguePeer(o: {
  chainId: number;
  genesisHash: string;
  target: string | string[];
  observe?: (topic: GossipTopic, bytes: Uint8Array, from: string) => void;
}): Promise<RoguePeer> {
  const nodeKey = randomBytes(32);
  const seen = (topic: GossipTopic) => async (bytes: Uint8Array, from: string) => {
    o.observe?.(topic, bytes, from);
    return 'ignore' as const;
  };
  const net = new P2PNetwork({
    nodeKey,
    host: '127.0.0.1',
    port: 0,
    peers: typeof o.target === 'string' ? [o.target] : o.target,
    chainId: o.chainId,
    genesisHash: o.genesisHash,
    status: () => ({ chain_id: o.chainId, genesis_hash: o.genesisHash, head_height: 0, head_hash: '00'.repeat(32) }),
    blocks: async () => [],
    onTransaction: seen('tx'),
    onBlock: seen('block'),
    onConsensus: seen('consensus'),
    onEvidence: seen('evidence'),
    log: pino({ level: 'silent' }),
  });
  await net.start();
  return { net, peerId: peerIdOfNodeKey(nodeKey), stop: () => net.stop() };
}

/** The block at `height` from a peer, decoded (with its stored justification). */
export async function fetchBlock(rogue: RoguePeer, peer: string, height: number): Promise<Block> {
  const [bytes] = await rogue.net.requestBlocks(peer, height, 1);
  if (!bytes) throw new Error(`peer has no block ${height}`);
  return decodeBlock(bytes);
}

/**
 * A BFT block on top of `parent` that is valid in every respect except what `spoil` changes after the
 * fact (before the proposer signs, unless `spoil` re-signs): proposed and signed by the scheduled
 * proposer, precommitted by three validators, carrying the parent's certificate.
 */
export function forgeChild(
  chainId: number,
  parent: Block,
  proposer: KeyPair,
  voters: KeyPair[],
  spoil: { stateRoot?: string; badSignature?: boolean },
): Uint8Array {
  const last_commit = parent.justification;
  const b: Block = {
    ...parent,
    index: parent.index + 1,
    previous_hash: parent.hash,
    validator: proposer.address,
    tx_count: 0,
    transactions: [],
    merkle_root: txMerkleRoot([]),
    receipts_root: receiptsRootOf(encodeReceipts([])),
    logs_bloom: EMPTY_BLOOM_HEX,
    state_root: spoil.stateRoot ?? parent.state_root,
    gas_used: 0n,
    round: 0,
    last_commit,
    last_commit_hash: lastCommitHash(last_commit),
    evidence: [],
    evidence_hash: evidenceHash([]),
    justification: new Uint8Array(0),
  };
  b.hash = blockHash(headerOf(b));
  const signer = spoil.badSignature ? (voters[0] === proposer ? voters[1] : voters[0]) : proposer;
  b.signature = toHex(signDigest(fromHex(b.hash), signer.privateKey));
  const precommits = voters
    .map((k) => {
      const body = { type: PRECOMMIT, height: b.index, round: 0, block_hash: b.hash } as const;
      return { validator: k.address, signature: toHex(signDigest(voteDigest(chainId, body), k.privateKey)) };
    })
    .sort((x, y) => (x.validator < y.validator ? -1 : 1));
  return encodeBlock({ ...b, justification: encodeJustification({ round: 0, precommits }) });
}
