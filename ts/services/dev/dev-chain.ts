/**
 * The dev chain's test controls (docs/dev-chain.md): accounts the node signs for and impersonation, the
 * clock, automine and manual mining, and direct state writes. Built by ts/node on `--dev` only, and the
 * JSON-RPC methods that use it (rpc/dev.ts) exist only then.
 */
import type { PoaEngine } from '../../consensus/poa.js';
import type { SignedTransaction } from '../../ledger/transaction.js';
import type { NodeContext } from '../context.js';
import { DevAccounts } from './accounts.js';
import { DevClock } from './clock.js';
import { DevMiner, type MiningMode } from './miner.js';
import { type SendArgs, sendTransaction } from './send.js';
import { setBalance, setCode, setNonce, setStorageAt } from './state-writes.js';

export type DevChainContext = Pick<NodeContext, 'chain' | 'mempool' | 'admission'> & Partial<NodeContext>;

export class DevChain {
  readonly accounts = new DevAccounts();
  readonly clock: DevClock;
  readonly miner: DevMiner;

  constructor(
    private readonly ctx: DevChainContext,
    poa: PoaEngine,
    mode: MiningMode,
    /** web3_clientVersion starts with `anvil/` (`--anvil-compat`). */
    readonly anvilCompat = false,
  ) {
    this.clock = new DevClock(ctx.chain);
    this.miner = new DevMiner(ctx.chain, poa, ctx.mempool, this.clock, mode);
  }

  /** Take over block production: automine on admission, the interval timer if one is set. */
  start(): void {
    const pooled = this.ctx.admission.onPooled;
    this.ctx.admission.onPooled = (tx) => {
      pooled?.(tx);
      this.miner.onPooled();
    };
    this.miner.start();
  }

  stop(): Promise<void> {
    return this.miner.stop();
  }

  /** Resolves once automine has mined what was admitted so far (a send answers after its block, as Hardhat). */
  settled(): Promise<void> {
    return this.miner.settled();
  }

  sendTransaction(ctx: NodeContext, args: SendArgs): Promise<SignedTransaction> {
    return sendTransaction(ctx, this.accounts, args);
  }

  setBalance(address: string, wei: bigint): Promise<void> {
    return setBalance(this.ctx.chain, address.toLowerCase(), wei);
  }

  setNonce(address: string, nonce: bigint): Promise<void> {
    return setNonce(this.ctx.chain, address.toLowerCase(), nonce);
  }

  setCode(address: string, code: Uint8Array): Promise<void> {
    return setCode(this.ctx.chain, address.toLowerCase(), code);
  }

  setStorageAt(address: string, slot: bigint, value: bigint): Promise<void> {
    return setStorageAt(this.ctx.chain, address.toLowerCase(), slot, value);
  }
}
