/** EVM logs of a receipt as the transaction page shows them: raw topics and data, decoded when the contract is verified. */
import { type Decoded, type NodeContext, decodeLog } from '../../services/index.js';
import type { AddrView } from '../rows.js';
import { addrView } from '../rows.js';
import type { verificationLookup } from '../verification.js';

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
  decoded: Decoded | null;
  verified: boolean;
}

const hex = (b: Uint8Array): string => `0x${Buffer.from(b).toString('hex')}`;

export async function decodedLogs(
  _ctx: NodeContext,
  logs: readonly RawLog[],
  verified: ReturnType<typeof verificationLookup>,
): Promise<LogView[]> {
  const out: LogView[] = [];
  for (const [index, l] of logs.entries()) {
    const address = hex(l.address);
    const topics = l.topics.map(hex);
    const data = hex(l.data);
    const v = await verified(address);
    out.push({
      index,
      address: addrView(address),
      topics,
      data,
      decoded: v ? await decodeLog(v.abi, topics, data) : null,
      verified: v !== null,
    });
  }
  return out;
}
