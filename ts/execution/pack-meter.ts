/**
 * The measured cost of EVM gas on this machine, for the proposer's packing (docs/evm.md "Block time"): the
 * execution time of the EVM transactions of recent blocks over their gas. Blocks of this thread feed it
 * (produced and imported alike: both run the same executor on the same machine); blocks with little EVM gas are
 * left out, their time is mostly the per-block and per-transaction overhead, not the gas.
 */

/** Blocks the estimate spans. */
const SAMPLES = 8;
/** EVM gas a block must have used to count. */
const MIN_SAMPLE_GAS = 1_000_000n;

export class PackMeter {
  private readonly gas: number[] = [];
  private readonly ms: number[] = [];

  /** A block's EVM gas and the time its EVM transactions took (ms). */
  record(gasUsed: bigint, evmMs: number): void {
    if (gasUsed < MIN_SAMPLE_GAS || !(evmMs >= 0)) return;
    this.gas.push(Number(gasUsed));
    this.ms.push(evmMs);
    if (this.gas.length > SAMPLES) {
      this.gas.shift();
      this.ms.shift();
    }
  }

  /** Milliseconds per gas over the recent blocks (their summed time over their summed gas); undefined before any. */
  msPerGas(): number | undefined {
    if (this.gas.length === 0) return undefined;
    let gas = 0;
    let ms = 0;
    for (let i = 0; i < this.gas.length; i++) {
      gas += this.gas[i];
      ms += this.ms[i];
    }
    return ms / gas;
  }

  /** Forget the samples (tests). */
  reset(): void {
    this.gas.length = 0;
    this.ms.length = 0;
  }
}

/** This thread's meter: every block executed here records into it. */
export const packMeter = new PackMeter();
