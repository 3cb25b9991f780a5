/**
 * SRC-20 invariants (Cosmos `keeper/invariants.go`), checked by the module tests after every block and by
 * /chain/validate: every token's supply is the sum of its balances, its holder count is its number of
 * non-zero balances, and no balance exists for a token that was never deployed. Cost: one pass over the state.
 */
import type { Invariant, StateScan } from '../kit/module.js';
import { TOKEN_NS, holdersKey, parseTokenBalanceKey, parseTokenKey } from './keys.js';
import { decodeTokenRecord, decodeU128 } from './state.js';

interface Tally {
  balances: bigint;
  holders: number;
}

function tallies(state: StateScan): { supplies: Map<string, bigint>; held: Map<string, Tally> } {
  const supplies = new Map<string, bigint>();
  const held = new Map<string, Tally>();
  for (const [k, v] of state.entries()) {
    const ns = k.charCodeAt(0);
    if (ns === TOKEN_NS.token) {
      const contract = parseTokenKey(k);
      if (contract) supplies.set(contract, decodeTokenRecord(contract, v).supply);
    } else if (ns === TOKEN_NS.tokenBalance) {
      const parsed = parseTokenBalanceKey(k);
      if (!parsed) continue;
      const t = held.get(parsed[0]) ?? { balances: 0n, holders: 0 };
      t.balances += decodeU128(v);
      t.holders += 1;
      held.set(parsed[0], t);
    }
  }
  return { supplies, held };
}

const supplyEqualsBalances: Invariant = {
  name: 'tokens/supply-equals-balances',
  check(state) {
    const bad: string[] = [];
    const { supplies, held } = tallies(state);
    for (const [contract, supply] of supplies) {
      const t = held.get(contract) ?? { balances: 0n, holders: 0 };
      if (t.balances !== supply) bad.push(`${contract}: supply ${supply}, balances sum to ${t.balances}`);
      const raw = state.get(holdersKey(contract));
      const counted = raw ? Number(raw.readBigUInt64BE(0)) : 0;
      if (counted !== t.holders) bad.push(`${contract}: ${counted} holders counted, ${t.holders} non-zero balances`);
    }
    for (const contract of held.keys()) if (!supplies.has(contract)) bad.push(`${contract}: balances of an unknown token`);
    return bad;
  },
};

export const TOKEN_INVARIANTS: readonly Invariant[] = [supplyEqualsBalances];
