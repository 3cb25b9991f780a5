/**
 * The values a speculation worker is given with its share of a block (docs/evm.md "Parallel execution"): it
 * has no other way to read the state, so what it is not given it misses, and a missed transaction runs on the
 * main thread. Shipped per transaction: the sender's and recipient's accounts and the recipient's code, and
 * what earlier blocks taught about the contract called:
 * - static keys: keys a call to it missed before (a counter's slot, a callee's account and code);
 * - mapping slots: a missed slot that is keccak256(address ‖ n) for an address the transaction names (its
 *   sender, an address word of its calldata) and a small n, as Solidity lays out `mapping(address => ...)` at
 *   slot n. The pattern (storage owner, n) is kept, and the next transactions to that contract get the slot of
 *   each address they name: an ERC-20 transfer's two balances without ever having seen the recipient.
 */
import { keccak256 } from '../../crypto/index.js';
import { type KeyStr, NS, type StateReader, accountKey, codeKey, storageKey } from '../../state/index.js';
import type { SignedTransaction } from '../../ledger/index.js';
import { FEE_COLLECTOR } from '../common.js';

/** Highest mapping slot index tried when a missed slot is explained. */
const MAPPING_SLOTS = 16;
/** Contracts remembered (oldest forgotten first) and keys kept per contract. */
const MAX_CONTRACTS = 4096;
const MAX_STATIC_KEYS = 128;
const MAX_PATTERNS = 16;

interface Learned {
  statics: Set<KeyStr>;
  /** [storage owner (20 bytes), slot index as a 32-byte word]. */
  patterns: [Uint8Array, Uint8Array][];
}

const learned = new Map<string, Learned>();

/** The calldata of a stored EVM transaction (`EVM:{gas}:{hex}`). */
function calldataOf(tx: SignedTransaction): Buffer {
  const i = tx.data.indexOf(':', 4);
  return Buffer.from(i < 0 ? '' : tx.data.slice(i + 1), 'hex');
}

/** The 20-byte addresses a transaction names: its sender, then every calldata word shaped like an address. */
function namedAddresses(tx: SignedTransaction): Buffer[] {
  const out: Buffer[] = [Buffer.from(tx.from_address.slice(2), 'hex')];
  const data = calldataOf(tx);
  for (let o = 4; o + 32 <= data.length; o += 32) {
    let zeros = 0;
    while (zeros < 12 && data[o + zeros] === 0) zeros++;
    if (zeros === 12 && data[o + 12] !== 0) out.push(data.subarray(o + 12, o + 32));
  }
  return out;
}

const word = (b: Uint8Array): Buffer => {
  const w = Buffer.alloc(32);
  w.set(b, 32 - b.length);
  return w;
};

/** The Solidity mapping slot of `key` in the mapping at slot `index` (both words). */
const mappingSlot = (key: Uint8Array, index: Uint8Array): Uint8Array => keccak256(Buffer.concat([word(key), index]));

function learnedFor(to: string): Learned {
  let l = learned.get(to);
  if (l) {
    // Most recently used last, so the oldest go first.
    learned.delete(to);
    learned.set(to, l);
    return l;
  }
  l = { statics: new Set(), patterns: [] };
  learned.set(to, l);
  if (learned.size > MAX_CONTRACTS) learned.delete(learned.keys().next().value as string);
  return l;
}

/** What a transaction to `to` missed in a worker, remembered for the next blocks. */
export function learnMisses(tx: SignedTransaction, to: string | null, keys: readonly KeyStr[]): void {
  if (to === null || keys.length === 0) return;
  const l = learnedFor(to);
  const addresses = namedAddresses(tx);
  for (const k of keys) {
    if (k.length === 53 && k.charCodeAt(0) === NS.storage && explainMapping(l, k, addresses)) continue;
    if (l.statics.size < MAX_STATIC_KEYS) l.statics.add(k);
  }
}

/** A mapping slot of a named address: its pattern is kept. */
function explainMapping(l: Learned, k: KeyStr, addresses: readonly Buffer[]): boolean {
  const b = Buffer.from(k, 'latin1');
  const owner = b.subarray(1, 21);
  const slot = b.subarray(21);
  for (const a of addresses) {
    for (let n = 0; n < MAPPING_SLOTS; n++) {
      const index = word(Uint8Array.of(n));
      if (!Buffer.from(mappingSlot(a, index)).equals(slot)) continue;
      const known = l.patterns.some(([o, i]) => owner.equals(o) && index.equals(i));
      if (!known && l.patterns.length < MAX_PATTERNS) l.patterns.push([Uint8Array.from(owner), index]);
      return true;
    }
  }
  return false;
}

/** The keys a transaction is expected to read. */
function* expectedKeys(tx: SignedTransaction): IterableIterator<KeyStr> {
  yield accountKey(tx.from_address);
  if (tx.to_address.length !== 42) return;
  yield accountKey(tx.to_address);
  yield codeKey(tx.to_address);
  const l = learned.get(tx.to_address.toLowerCase());
  if (!l) return;
  yield* l.statics;
  if (l.patterns.length === 0) return;
  for (const a of namedAddresses(tx)) for (const [owner, index] of l.patterns) yield storageKey(owner, mappingSlot(a, index));
}

/** The pre-block values of every key the transactions are expected to read, from `state` (the block's overlay). */
export function shippedValues(
  state: StateReader,
  txs: readonly SignedTransaction[],
  prefetch?: (keys: Iterable<KeyStr>) => void,
): Map<KeyStr, Uint8Array | null> {
  const keys = new Set<KeyStr>([accountKey(FEE_COLLECTOR)]);
  for (const tx of txs) for (const k of expectedKeys(tx)) keys.add(k);
  prefetch?.(keys);
  const out = new Map<KeyStr, Uint8Array | null>();
  for (const k of keys) out.set(k, state.get(k) ?? null);
  return out;
}
