/**
 * Native events: what a native operation (SRC-20, staking, SRC-721) records in its transaction's receipt,
 * the native counterpart of EVM logs. Every value is a string (amounts and ids in decimal, booleans as
 * "true"/"false", addresses in their canonical form) so an event has one encoding on every node and
 * survives JSON without loss. Events are part of the receipt, hence of the block's receipts root.
 */
import { RLP } from '@ethereumjs/rlp';

export interface NativeEvent {
  /** The event name, e.g. `Transfer`, `Minted`, `Delegated`. Unique across operation families. */
  type: string;
  /** Field name -> value, in the order the operation wrote them. */
  fields: Record<string, string>;
}

const utf8 = new TextEncoder();
const text = new TextDecoder();

/** The RLP item of a receipt's events: [[type, [[name, value], ...]], ...]. */
export function eventsRlpItem(events: readonly NativeEvent[]): Uint8Array[][] {
  return events.map((e) => [
    utf8.encode(e.type),
    Object.entries(e.fields).map(([k, v]) => [utf8.encode(k), utf8.encode(v)]),
  ]) as unknown as Uint8Array[][];
}

export function eventsFromRlpItem(item: unknown): NativeEvent[] {
  if (!Array.isArray(item)) return [];
  return (item as [Uint8Array, [Uint8Array, Uint8Array][]][]).map(([type, fields]) => {
    const f: Record<string, string> = {};
    for (const [k, v] of fields) f[text.decode(k)] = text.decode(v);
    return { type: text.decode(type), fields: f };
  });
}

/** Encoding of a list of events alone (tests, traces). */
export const encodeEvents = (events: readonly NativeEvent[]): Uint8Array => RLP.encode(eventsRlpItem(events) as never);
export const decodeEvents = (bytes: Uint8Array): NativeEvent[] => eventsFromRlpItem(RLP.decode(bytes));
