/**
 * The node's networked half: the libp2p host, block sync, transaction relay, the evidence pool and (on
 * validators of a BFT height) the BFT engine, wired to each other and to the query layer's NetworkView.
 */
import type { Logger } from 'pino';
import { decodeBlock, encodeBlock, type Chain, encodeEvidence, genesisIdentity } from '../chain/index.js';
import {
  BftEngine,
  InvalidConsensusMessage,
  ConsensusGossip,
  EvidencePool,
  InvalidEvidenceError,
  decodeConsensusMessage,
  encodeConsensusMessage,
  encodeForGossip,
  type PoaEngine,
  SignGuard,
} from '../consensus/index.js';
import { type KeyPair, encodeTransaction } from '../ledger/index.js';
import type { TxAdmission, Mempool } from '../mempool/index.js';
import { NetworkMetrics, type NodeMetrics } from '../metrics/index.js';
import { P2PNetwork, PeerMisbehaviour, loadOrCreateNodeKey, MAX_GOSSIP_BYTES } from '../network/index.js';
import type { NetworkView } from '../services/index.js';
import { BlockSync, admitGossipedTransaction } from '../sync/index.js';
import type { NodeConfig } from './config.js';
import { servedSnapshots } from './state-snapshots.js';

export interface Networking {
  net: P2PNetwork;
  sync: BlockSync;
  evidence: EvidencePool;
  bft: BftEngine | null;
  view: NetworkView;
  stop(): Promise<void>;
}

export interface NetworkDeps {
  config: NodeConfig;
  chain: Chain;
  mempool: Mempool;
  admission: TxAdmission;
  poa: PoaEngine;
  validatorKey: KeyPair;
  metrics: NodeMetrics;
  log: Logger;
}

/**
 * Test-only fail points (CometBFT's FAIL_TEST_INDEX is the model), `NATIVE_FAILPOINT=<point>@H`, for a
 * vote for a block at a height ≥ H: `after-prevote` makes a validator kill itself (SIGKILL) right after
 * signing and sending the prevote, so tests can crash it between its prevote and its precommit;
 * `after-lock` kills it right after its precommit (its lock) is on disk, before the precommit is sent, so
 * tests can restart validators locked on a block that no other node saw decided.
 */
function failPoint(
  log: Logger,
  engine: BftEngine,
): ((vote: { type: number; height: number; block_hash: string }) => void) | undefined {
  const m = /^(after-prevote|after-lock)@(\d+)$/.exec(process.env.NATIVE_FAILPOINT ?? '');
  if (!m) return undefined;
  const [point, from] = [m[1], Number(m[2])];
  return (vote) => {
    if (vote.block_hash === '' || vote.height < from) return;
    if (point === 'after-lock' && vote.type === 2) {
      log.warn({ height: vote.height }, 'fail point after-lock: killing this process');
      // At once: the precommit is persisted but this call returns to no code that could send it.
      process.kill(process.pid, 'SIGKILL');
    }
    if (point !== 'after-prevote' || vote.type !== 1) return;
    log.warn({ height: vote.height }, 'fail point after-prevote: killing this process');
    // The engine signs nothing more (its stop flag is set at once); the prevote itself is still sent.
    void engine.stop();
    setTimeout(() => process.kill(process.pid, 'SIGKILL'), 100);
  };
}

export async function startNetworking(d: NetworkDeps): Promise<Networking> {
  const { config, chain, mempool, admission, poa, log } = d;
  const logger = log.child({ component: 'p2p' });
  const genesis = await chain.blocks.getBlock(0);
  // Peers must share the genesis block and the genesis parameters it does not commit to (validators...).
  const genesisHash = genesisIdentity(chain.params, genesis?.hash ?? '');
  const evidence = new EvidencePool(chain);
  let sync!: BlockSync;
  let bft: BftEngine | null = null;
  let lastFinalizedAt = Date.now();
  chain.on('block', () => {
    lastFinalizedAt = Date.now();
  });

  const consensusGossip = new ConsensusGossip(chain, () => bft, logger);
  const net = new P2PNetwork({
    nodeKey: loadOrCreateNodeKey(config.dataDir),
    host: config.p2pHost,
    port: config.p2pPort ?? 0,
    peers: config.peers,
    chainId: chain.params.chainId,
    genesisHash,
    status: () => sync.status(),
    blocks: (from, count, maxBytes) => sync.blocks(from, count, maxBytes),
    blockByHash: async (hash) => {
      const proposal = bft?.proposalBlock(hash);
      if (proposal) return encodeBlock(proposal);
      const height = await chain.blocks.heightOfHash(hash);
      const committed = height === null ? null : await chain.blocks.getBlock(height);
      return committed ? encodeBlock(committed) : null;
    },
    onTransaction: (bytes) => admitGossipedTransaction(admission, bytes),
    onBlock: (bytes, from) => sync.onGossipBlock(bytes, from),
    onPeerStatus: () => sync.poke(),
    consensusAt: (height) => (bft?.messagesAt(height) ?? []).map(encodeConsensusMessage),
    snapshots: servedSnapshots(chain),
    // Checked here on every node, validator or not, before it is relayed (consensus-gossip.ts).
    onConsensus: async (bytes, from) => {
      try {
        return await consensusGossip.validate(bytes, from);
      } catch (err) {
        if (err instanceof InvalidConsensusMessage) throw new PeerMisbehaviour(err.message);
        throw err;
      }
    },
    onEvidence: async (bytes) => {
      try {
        if (!evidence.addEncoded(bytes)) return 'ignore';
        networkMetrics.evidenceSeen();
        return 'accept';
      } catch (err) {
        // Age depends on this node's head: an honest peer a little behind may still relay it.
        if (err instanceof InvalidEvidenceError && /older than/.test(err.message)) return 'ignore';
        if (err instanceof InvalidEvidenceError) throw new PeerMisbehaviour(`invalid evidence: ${err.message}`);
        throw err;
      }
    },
    log: logger,
  });
  sync = new BlockSync(chain, mempool, admission, net, logger);
  sync.genesisHash = genesisHash;
  const networkMetrics = new NetworkMetrics(d.metrics.registry, {
    peers: () => net.peers().length,
    bft: () => (bft ? { height: bft.state.height, round: bft.state.round } : null),
    finalityLagBlocks: () => chain.height - poa.finalizedHeight(),
    lastFinalizedAgeSeconds: () => (Date.now() - lastFinalizedAt) / 1000,
    syncTarget: () => sync.targetHeight(),
    height: () => chain.height,
    catchingUp: () => sync.catchingUp(),
    blocksImported: () => sync.imported,
    gossip: () => net.counters,
  });
  await net.start();
  sync.start();
  poa.canPropose = () => !sync.behind();
  admission.onAdmitted = (tx) => void net.publishTransaction(encodeTransaction(tx));
  const produced = poa.onProduced;
  poa.onProduced = (info) => {
    produced?.(info);
    void net.publishBlock(encodeBlock(chain.head));
  };

  const key = d.validatorKey;
  if (config.role !== 'full' && chain.params.validators.some((v) => v.address === key.address)) {
    bft = new BftEngine(
      chain,
      mempool,
      key,
      {
        blockTimeMs: config.blockTimeMs,
        maxBlockTxs: config.maxBlockTxs,
        pack: { gas: config.packGasLimit, ms: config.packTimeMs },
        evidence,
        fetchBlock: async (hash, from) => {
          const bytes = await net.requestBlockByHash(from, hash).catch(() => null);
          return bytes ? decodeBlock(bytes) : null;
        },
      },
      new SignGuard(config.dataDir),
      (m) => void net.publishConsensus(encodeForGossip(m, MAX_GOSSIP_BYTES)),
    );
    bft.observe({
      committed: (b) => {
        mempool.onBlock(b.transactions, []);
        admission.onBlock();
        // Validators decide the block themselves; one copy on the block topic, from its proposer, is what
        // full nodes need (a missed one is fetched by range).
        if (b.validator === key.address) void net.publishBlock(encodeBlock(b));
      },
      evidence: (e) => {
        try {
          if (!evidence.add(e)) return;
        } catch (err) {
          logger.warn({ err: (err as Error).message }, 'conflicting votes not admissible as evidence');
          return;
        }
        networkMetrics.evidenceSeen();
        logger.warn({ validator: e.a.validator, height: e.a.height, round: e.a.round, type: e.a.type }, 'double-sign evidence');
        void net.publishEvidence(encodeEvidence(e));
      },
      roundStarted: (h, r) => {
        networkMetrics.roundStarted(r);
        // Later rounds mean a proposal or a quorum did not arrive in time: worth a line in the log.
        if (r > 0) {
          const s = bft?.state;
          logger.info(
            { height: h, round: r, proposer: bft?.currentProposer(), locked_round: s?.locked_round, valid_round: s?.valid_round },
            'BFT round started',
          );
        }
      },
      resumed: (info) => logger.info(info, 'BFT resumed a height after a restart'),
      stuck: (height) => {
        for (const peer of net.connectedPeerIds()) void catchUpConsensus(peer, height);
      },
      finalized: (f) => networkMetrics.finalized(f.proposalToFinalityMs),
      voteSigned: failPoint(logger, bft),
      error: (err) => logger.error({ err }, 'BFT step failed'),
    });
    bft.start();
  }
  /** A peer's proposals and votes of a height, fed to the engine like gossip (forged ones cost the peer). */
  async function catchUpConsensus(peer: string, height: number): Promise<void> {
    let frames: Uint8Array[];
    try {
      frames = await net.requestConsensus(peer, height);
    } catch (err) {
      logger.debug({ peer, err: (err as Error).message }, 'consensus catch-up request failed');
      return;
    }
    for (const f of frames) {
      try {
        await bft?.receive(decodeConsensusMessage(f), peer);
      } catch (err) {
        if (!(err instanceof InvalidConsensusMessage)) throw err;
        await net.penalize(peer, 50, `invalid consensus message in a catch-up response: ${err.message}`);
        return;
      }
    }
  }
  const engine = bft;
  const view: NetworkView = {
    peerId: net.peerId,
    peers: () => net.peers(),
    catchingUp: () => sync.catchingUp(),
    targetHeight: () => sync.targetHeight(),
    syncing: () => sync.syncing(),
    bestProvenPeerHeight: () => sync.bestProvenPeerHeight(),
    bft: engine ? () => ({ ...engine.state, proposer: engine.currentProposer() }) : undefined,
    evidence: () => evidence.list(),
    lastFinalizedAt: () => lastFinalizedAt,
    blocksImported: () => sync.imported,
  };
  return {
    net,
    sync,
    evidence,
    bft,
    view,
    stop: async () => {
      await bft?.stop();
      await sync.stop();
      await net.stop();
    },
  };
}
