/**
 * Sorted indexes over the authenticated state, maintained at commit: the node builds them once from the
 * state when it starts (one pass, like loading the state itself) and then folds in exactly the keys each
 * committed block changed (the undo record of the chain's `block` event). Rich list, top accounts, token
 * holder lists and the tokens an account holds are read from here, never by scanning the state per request.
 *
 * Orders are kept in B+ trees (sorted-btree) keyed by a string that sorts by balance descending, then
 * address: a top-k read is O(k), an update O(log n).
 */
import sortedBtree from 'sorted-btree';
import type { Chain } from '../chain/chain.js';
import { parseTokenBalanceKey, parseTokenKey, decodeU128 } from '../ledger/tokens/state.js';
import { parseDelegationKey, parseUnbondingKey } from '../ledger/staking/index.js';
import { addressFromAccountKey, decodeAccount } from '../state/accounts.js';
import type { KeyStr } from '../state/state-store.js';

const BTree = sortedBtree.default;
type Tree = InstanceType<typeof BTree<string, bigint>>;

const U256_MAX = (1n << 256n) - 1n;
/** Sort key: balance descending (complement, fixed width), then address ascending. */
const rankKey = (balance: bigint, address: string): string => (U256_MAX - balance).toString(16).padStart(64, '0') + address;
const addressOfRankKey = (k: string): string => k.slice(64);

/** Balances of one ordering: current value per address and the sorted order. */
export class RankedBalances {
  private readonly byAddress = new Map<string, bigint>();
  private readonly order: Tree = new BTree<string, bigint>();
  /** Sum of the balances. */
  total = 0n;

  set(address: string, balance: bigint): void {
    const before = this.byAddress.get(address);
    if (before !== undefined) {
      this.order.delete(rankKey(before, address));
      this.total -= before;
    }
    if (balance > 0n) {
      this.byAddress.set(address, balance);
      this.order.set(rankKey(balance, address), balance);
      this.total += balance;
    } else this.byAddress.delete(address);
  }

  get(address: string): bigint {
    return this.byAddress.get(address) ?? 0n;
  }

  get size(): number {
    return this.byAddress.size;
  }

  /** Entries from rank offset (0-based), largest first. */
  top(limit: number, offset = 0): { address: string; balance: bigint }[] {
    const out: { address: string; balance: bigint }[] = [];
    let i = 0;
    for (const [k, balance] of this.order.entries()) {
      if (out.length >= limit) break;
      if (i++ < offset) continue;
      out.push({ address: addressOfRankKey(k), balance });
    }
    return out;
  }
}

export class StateIndex {
  /** Account balances (wei) with a non-zero balance. */
  readonly accounts = new RankedBalances();
  /** Number of account records (including zero balances). */
  accountRecords = 0;
  /** Deployed token contracts. */
  readonly tokens = new Set<string>();
  private readonly holders = new Map<string, RankedBalances>();
  private readonly accountTokens = new Map<string, Set<string>>();
  private readonly accountKeys = new Set<KeyStr>();
  /** Delegators per validator and validators per delegator (from the delegation keys). */
  private readonly delegatorsByValidator = new Map<string, Set<string>>();
  /** Unbonding entries per delegator: [validator, complete_epoch]. */
  private readonly unbondingByDelegator = new Map<string, Map<string, [string, number]>>();

  constructor(private readonly chain: Chain) {
    const pending: KeyStr[] = [];
    for (const [k] of chain.state.entries()) pending.push(k);
    this.apply(pending);
    chain.on('block', (_b, _r, undo) => this.apply(undo.keys()));
    chain.on('rollback', (_height, keys) => this.apply(keys));
  }

  /** Token holders (token base units), largest first. */
  holdersOf(contract: string): RankedBalances | undefined {
    return this.holders.get(contract);
  }

  /** Contracts in which address holds a non-zero balance. */
  tokensOf(address: string): string[] {
    return [...(this.accountTokens.get(address) ?? [])].sort();
  }

  /** Delegators of a validator (sorted). */
  delegatorsOf(validator: string): string[] {
    return [...(this.delegatorsByValidator.get(validator) ?? [])].sort();
  }

  /** Unbonding entries of a delegator: [validator, complete_epoch], soonest first. */
  unbondingOf(delegator: string): [string, number][] {
    return [...(this.unbondingByDelegator.get(delegator)?.values() ?? [])].sort((a, b) => a[1] - b[1]);
  }

  private stakingKey(k: KeyStr, present: boolean): boolean {
    const del = parseDelegationKey(k);
    if (del) {
      const [d, v] = del;
      let set = this.delegatorsByValidator.get(v);
      if (present) {
        if (!set) this.delegatorsByValidator.set(v, (set = new Set()));
        set.add(d);
      } else set?.delete(d);
      return true;
    }
    const ub = parseUnbondingKey(k);
    if (ub) {
      const [d, v, e] = ub;
      let m = this.unbondingByDelegator.get(d);
      if (present) {
        if (!m) this.unbondingByDelegator.set(d, (m = new Map()));
        m.set(k, [v, e]);
      } else {
        m?.delete(k);
        if (m?.size === 0) this.unbondingByDelegator.delete(d);
      }
      return true;
    }
    return false;
  }

  /** Fold the current values of these state keys into the indexes. */
  private apply(keys: Iterable<KeyStr>): void {
    const state = this.chain.state;
    for (const k of keys) {
      const ns = k.charCodeAt(0);
      const v = state.get(k);
      if (ns === 0x01) {
        const address = addressFromAccountKey(k);
        if (!address) continue;
        if (v && !this.accountKeys.has(k)) {
          this.accountKeys.add(k);
          this.accountRecords++;
        } else if (!v && this.accountKeys.delete(k)) this.accountRecords--;
        this.accounts.set(address, v ? decodeAccount(v).balance : 0n);
        continue;
      }
      if (this.stakingKey(k, v !== undefined)) continue;
      const contract = parseTokenKey(k);
      if (contract) {
        if (v) this.tokens.add(contract);
        else this.tokens.delete(contract);
        continue;
      }
      const bal = parseTokenBalanceKey(k);
      if (bal) {
        const [c, holder] = bal;
        let h = this.holders.get(c);
        if (!h) this.holders.set(c, (h = new RankedBalances()));
        const amount = v ? decodeU128(v) : 0n;
        h.set(holder, amount);
        let set = this.accountTokens.get(holder);
        if (amount > 0n) {
          if (!set) this.accountTokens.set(holder, (set = new Set()));
          set.add(c);
        } else if (set) {
          set.delete(c);
          if (set.size === 0) this.accountTokens.delete(holder);
        }
      }
    }
  }
}

const indexes = new WeakMap<Chain, StateIndex>();

/**
 * The chain's state index. The node creates it at start (so it follows every commit from then on); a
 * context built without the node gets it on first use, after the head state has settled.
 */
export async function stateIndex(ctx: { chain: Chain }): Promise<StateIndex> {
  let idx = indexes.get(ctx.chain);
  if (!idx) {
    await ctx.chain.settled();
    idx = indexes.get(ctx.chain);
    if (!idx) indexes.set(ctx.chain, (idx = new StateIndex(ctx.chain)));
  }
  return idx;
}
