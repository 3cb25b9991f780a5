/**
 * SRC-20 handlers (docs/tokens-and-staking.md; Cosmos `keeper/msg_server.go`): Deploy, Transfer, Burn, Mint,
 * Approve and TransferFrom with ERC-20 semantics, on balances kept in the authenticated state (state.ts).
 * Every failure throws one of errors.ts: a 400 at admission, a status-0 receipt with that reason at inclusion.
 */
import type { OperationCall } from '../kit/context.js';
import type { HandlerMap } from '../kit/module.js';
import { MAX_U128 } from '../kit/spec.js';
import {
  InsufficientAllowance,
  InsufficientTokenBalance,
  MaxSupplyExceeded,
  NotTokenOwner,
  SupplyOverflow,
  TokenAlreadyExists,
  UnknownToken,
} from './errors.js';
import { TOKEN_EVENTS } from './events.js';
import { tokenBalanceKey, tokenContractAddress } from './keys.js';
import type { TOKEN_OPERATIONS } from './operations.js';
import {
  type TokenRecord,
  getAmount,
  getToken,
  putToken,
  putTokenAllowance,
  putTokenBalance,
  putTokenBalanceAt,
  tokenAllowance,
  tokenBalance,
  tokenExists,
} from './state.js';

function requireToken(call: OperationCall<unknown>, contract: string): void {
  if (!tokenExists(call.state, contract)) throw new UnknownToken(contract);
}

function existingToken(call: OperationCall<unknown>, contract: string): TokenRecord {
  const t = getToken(call.state, contract);
  if (!t) throw new UnknownToken(contract);
  return t;
}

/**
 * Move amount (≥ 1) from -> to; throws on an unknown token or an insufficient balance. A balance can only
 * exist for a deployed token, so the token record is read only when the balance does not cover the
 * amount (to tell an unknown token from a short balance); each balance key is built once.
 */
function move(call: OperationCall<unknown>, contract: string, from: string, to: string, amount: bigint): void {
  const { state } = call;
  const fromKey = tokenBalanceKey(contract, from);
  const have = getAmount(state, fromKey);
  if (have < amount) {
    requireToken(call, contract);
    throw new InsufficientTokenBalance(from, have, amount);
  }
  putTokenBalanceAt(state, contract, fromKey, have, have - amount);
  const toKey = tokenBalanceKey(contract, to);
  const dest = getAmount(state, toKey);
  putTokenBalanceAt(state, contract, toKey, dest, dest + amount);
}

export const TOKEN_HANDLERS: HandlerMap<typeof TOKEN_OPERATIONS> = {
  Deploy(call) {
    const m = call.op.fields;
    const deployer = call.tx.from_address;
    const contract = tokenContractAddress(deployer, call.tx.nonce);
    if (tokenExists(call.state, contract)) throw new TokenAlreadyExists(contract);
    putToken(call.state, {
      contract,
      name: m.name,
      symbol: m.symbol,
      decimals: Number(m.decimals),
      supply: m.supply,
      max_supply: m.max_supply,
      owner: deployer,
      deployed_at_height: call.env.height,
    });
    if (m.supply > 0n) putTokenBalance(call.state, contract, deployer, 0n, m.supply);
    call.emit({
      type: TOKEN_EVENTS.deploy,
      fields: {
        contract,
        deployer,
        name: m.name,
        symbol: m.symbol,
        decimals: String(m.decimals),
        supply: m.supply.toString(),
        max_supply: m.max_supply.toString(),
      },
    });
  },
  Transfer(call) {
    const { contract, to, amount } = call.op.fields;
    move(call, contract, call.tx.from_address, to, amount);
    call.emit({
      type: TOKEN_EVENTS.transfer,
      fields: { contract, from: call.tx.from_address, to, amount: amount.toString() },
    });
  },
  TransferFrom(call) {
    const { contract, from: owner, to, amount } = call.op.fields;
    const spender = call.tx.from_address;
    // ERC-20: the owner moving its own tokens needs no allowance. An allowance exists only for a deployed token.
    if (owner !== spender) {
      const allowed = tokenAllowance(call.state, contract, owner, spender);
      if (allowed < amount) {
        requireToken(call, contract);
        throw new InsufficientAllowance(owner, spender, allowed, amount);
      }
      putTokenAllowance(call.state, contract, owner, spender, allowed - amount);
    }
    move(call, contract, owner, to, amount);
    call.emit({
      type: TOKEN_EVENTS.transfer,
      fields: { contract, from: owner, to, amount: amount.toString(), spender },
    });
  },
  Burn(call) {
    const { contract, amount } = call.op.fields;
    const t = existingToken(call, contract);
    const from = call.tx.from_address;
    const have = tokenBalance(call.state, contract, from);
    if (have < amount) throw new InsufficientTokenBalance(from, have, amount);
    putTokenBalance(call.state, contract, from, have, have - amount);
    putToken(call.state, { ...t, supply: t.supply - amount });
    call.emit({ type: TOKEN_EVENTS.burn, fields: { contract, from, amount: amount.toString() } });
  },
  Mint(call) {
    const { contract, to, amount } = call.op.fields;
    const t = existingToken(call, contract);
    if (call.tx.from_address !== t.owner) throw new NotTokenOwner(t.owner, contract);
    const supply = t.supply + amount;
    if (t.max_supply > 0n && supply > t.max_supply) throw new MaxSupplyExceeded(t.supply, amount, t.max_supply);
    if (supply > MAX_U128) throw new SupplyOverflow();
    const have = tokenBalance(call.state, contract, to);
    putTokenBalance(call.state, contract, to, have, have + amount);
    putToken(call.state, { ...t, supply });
    call.emit({ type: TOKEN_EVENTS.mint, fields: { contract, to, amount: amount.toString() } });
  },
  Approve(call) {
    const { contract, spender, amount } = call.op.fields;
    requireToken(call, contract);
    const owner = call.tx.from_address;
    putTokenAllowance(call.state, contract, owner, spender, amount);
    call.emit({
      type: TOKEN_EVENTS.approval,
      fields: { contract, owner, spender, amount: amount.toString() },
    });
  },
};
