/** EVM logs of a receipt as the transaction page shows them: raw topics and data, decoded when the ABI is known. */
import type { NodeContext } from '../../services/index.js';
import type { AddrView } from '../rows.js';
import { addrView } from '../rows.js';
import { verifiedContract } from '../verification.js';

interface RawLog {
  address: Uint8Array;
  topics: Uint8Array[];
  data: Uint8Array;
}

export interface LogView {
  index: number;
  address: AddrView;
  topics: string[];
  data: string;
  /** "Transfer(address from, address to, uint256 value)" with its arguments, when the contract is verified. */
  decoded: { signature: string; args: { name: string; value: string }[] } | null;
  verified: boolean;
}

const hex = (b: Uint8Array): string => `0x${Buffer.from(b).toString('hex')}`;

export async function decodedLogs(ctx: NodeContext, logs: readonly RawLog[]): Promise<LogView[]> {
  const out: LogView[] = [];
  for (const [index, l] of logs.entries()) {
    const address = hex(l.address);
    const verified = await verifiedContract(ctx, address);
    out.push({
      index,
      address: addrView(address),
      topics: l.topics.map(hex),
      data: hex(l.data),
      decoded: null,
      verified: verified !== null,
    });
  }
  return out;
}
