import { health, nativeStatus, netPeers } from '../../services/index.js';
import { address, arr, bool, hash, int, literal, nullable, obj, str } from '../schema.js';
import type { RouteDef } from '../types.js';

export const opsRoutes: RouteDef[] = [
  {
    method: 'GET',
    path: '/health',
    tag: 'ops',
    noKey: true,
    summary: 'Liveness',
    response: obj({ status: literal('ok'), node: str('node name') }),
    handler: (ctx) => ({ body: health(ctx) }),
  },
  {
    method: 'GET',
    path: '/native_status',
    tag: 'ops',
    summary: 'Version, chain, consensus phase, sync state, validators, uptime',
    response: obj({
      version: obj({ version: str(), build: str('commit id or unknown') }),
      chain_id: int(),
      consensus: str('PoA or DPoS+BFT'),
      native_token: str(),
      sync_info: obj({
        latest_block_height: int(),
        latest_block_hash: hash(),
        latest_block_time: int(),
        earliest_block_height: int(),
        syncing: bool(),
        catching_up: bool('true while a peer is known to be ahead of this node'),
        target_height: int("highest head reported by a peer (this node's head without peers)"),
        peers: int('connected peers that passed the chain handshake'),
        finalized_height: int('every committed block is final: the head under PoA and BFT alike'),
        blocks_imported: int('blocks imported from peers since the node started'),
      }),
      consensus_state: obj({
        phase: str('consensus of the next height: PoA, DPoS or DPoS+BFT'),
        height: int('height being decided'),
        round: nullable(int('BFT round (null without a BFT engine on this node)')),
        step: nullable(str('propose, prevote or precommit')),
        proposer: nullable(address('proposer of the current round')),
        validator: bool('this node runs a BFT engine (a validator of the set)'),
      }),
      validators: obj({ active_count: int() }),
      uptime_seconds: int(),
    }),
    handler: (ctx) => ({ body: nativeStatus(ctx) }),
  },
  {
    method: 'GET',
    path: '/net/peers',
    tag: 'ops',
    summary: 'Connected P2P peers (peer id, address, direction, reported height, score)',
    response: obj({
      peer_id: nullable(str("this node's peer id; null without networking")),
      peers: arr(
        obj({
          peer_id: str(),
          address: str('multiaddr'),
          direction: str('inbound or outbound'),
          height: nullable(int('last head the peer reported')),
          score: int('misbehaviour score (0 = clean; refused at -50)'),
        }),
      ),
      total: int(),
    }),
    handler: (ctx) => ({ body: netPeers(ctx) }),
  },
];
