import type { Chain } from '../chain/chain.js';
import type { ConsensusEngine } from '../consensus/interface.js';
import type { TxAdmission } from '../mempool/admission.js';
import type { Mempool } from '../mempool/mempool.js';

/** Everything a query or command needs; built once by ts/node and passed to every interface. */
export interface NodeContext {
  chain: Chain;
  mempool: Mempool;
  admission: TxAdmission;
  consensus: ConsensusEngine;
  nodeName: string;
  version: string;
  build: string;
  startedAt: number;
  /** Name of the crypto backend in use ("native" or "js"). */
  cryptoBackend: string;
}

export const NODE_VERSION = '0.1.0';
export const NATIVE_TOKEN = 'NATIVE';
