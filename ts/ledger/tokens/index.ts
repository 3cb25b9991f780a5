/**
 * SRC-20 native tokens (docs/tokens-and-staking.md): Deploy, Transfer, Burn, Mint, Approve and
 * TransferFrom with ERC-20 semantics, on balances kept in the authenticated state (./state.ts). Every
 * failure throws OperationFailed with a message naming what is wrong: a 400 at admission, a status-0
 * receipt with that reason at inclusion.
 */
import type { NativeEvent } from '../events.js';
import { type OperationCall, OperationFailed, type OperationModule } from '../operation-context.js';
import { MAX_U128, type OperationName } from '../operations.js';
import { ZERO_ADDRESS } from '../units.js';
import {
  getAmount,
  getToken,
  putToken,
  putTokenAllowance,
  putTokenBalance,
  putTokenBalanceAt,
  tokenAllowance,
  tokenBalance,
  tokenBalanceKey,
  tokenContractAddress,
  tokenExists,
} from './state.js';

export * from './state.js';

/** Event names of the token family (unique across families). */
export const TOKEN_EVENTS = {
  deploy: 'TokenDeploy',
  transfer: 'TokenTransfer',
  mint: 'TokenMint',
  burn: 'TokenBurn',
  approval: 'TokenApproval',
} as const;

const str = (v: unknown): string => v as string;
const amt = (v: unknown): bigint => v as bigint;

function requireToken(call: OperationCall, contract: string): void {
  if (!tokenExists(call.state, contract)) throw new OperationFailed(`unknown token contract ${contract}`);
}

/**
 * Move amount (≥ 1) from -> to; throws on an unknown token or an insufficient balance. A balance can only
 * exist for a deployed token, so the token record is read only when the balance does not cover the
 * amount (to tell an unknown token from a short balance); each balance key is built once.
 */
function move(call: OperationCall, contract: string, from: string, to: string, amount: bigint): void {
  const { state } = call;
  const fromKey = tokenBalanceKey(contract, from);
  const have = getAmount(state, fromKey);
  if (have < amount) {
    requireToken(call, contract);
    throw new OperationFailed(`insufficient token balance: ${from} holds ${have}, ${amount} needed`);
  }
  putTokenBalanceAt(state, contract, fromKey, have, have - amount);
  const toKey = tokenBalanceKey(contract, to);
  const dest = getAmount(state, toKey);
  putTokenBalanceAt(state, contract, toKey, dest, dest + amount);
}

const HANDLERS: Partial<Record<OperationName, (call: OperationCall) => void>> = {
  Deploy(call) {
    const f = call.op.fields;
    const deployer = call.tx.from_address;
    const contract = tokenContractAddress(deployer, call.tx.nonce);
    if (tokenExists(call.state, contract)) throw new OperationFailed(`token contract ${contract} already exists`);
    const supply = amt(f.supply);
    putToken(call.state, {
      contract,
      name: str(f.name),
      symbol: str(f.symbol),
      decimals: Number(f.decimals),
      supply,
      max_supply: amt(f.max_supply),
      owner: deployer,
      deployed_at_height: call.env.height,
    });
    if (supply > 0n) putTokenBalance(call.state, contract, deployer, 0n, supply);
    call.emit({
      type: TOKEN_EVENTS.deploy,
      fields: {
        contract,
        deployer,
        name: str(f.name),
        symbol: str(f.symbol),
        decimals: String(f.decimals),
        supply: supply.toString(),
        max_supply: amt(f.max_supply).toString(),
      },
    });
  },
  Transfer(call) {
    const f = call.op.fields;
    const contract = str(f.contract);
    move(call, contract, call.tx.from_address, str(f.to), amt(f.amount));
    call.emit({
      type: TOKEN_EVENTS.transfer,
      fields: { contract, from: call.tx.from_address, to: str(f.to), amount: amt(f.amount).toString() },
    });
  },
  TransferFrom(call) {
    const f = call.op.fields;
    const contract = str(f.contract);
    const spender = call.tx.from_address;
    const owner = str(f.from);
    const amount = amt(f.amount);
    // ERC-20: the owner moving its own tokens needs no allowance. An allowance exists only for a deployed token.
    if (owner !== spender) {
      const allowed = tokenAllowance(call.state, contract, owner, spender);
      if (allowed < amount) requireToken(call, contract);
      if (allowed < amount)
        throw new OperationFailed(`insufficient allowance: ${owner} approved ${allowed} to ${spender}, ${amount} needed`);
      putTokenAllowance(call.state, contract, owner, spender, allowed - amount);
    }
    move(call, contract, owner, str(f.to), amount);
    call.emit({
      type: TOKEN_EVENTS.transfer,
      fields: { contract, from: owner, to: str(f.to), amount: amount.toString(), spender },
    });
  },
  Burn(call) {
    const f = call.op.fields;
    const contract = str(f.contract);
    const t = getToken(call.state, contract);
    if (!t) throw new OperationFailed(`unknown token contract ${contract}`);
    const from = call.tx.from_address;
    const amount = amt(f.amount);
    const have = tokenBalance(call.state, contract, from);
    if (have < amount) throw new OperationFailed(`insufficient token balance: ${from} holds ${have}, ${amount} needed`);
    putTokenBalance(call.state, contract, from, have, have - amount);
    putToken(call.state, { ...t, supply: t.supply - amount });
    call.emit({ type: TOKEN_EVENTS.burn, fields: { contract, from, amount: amount.toString() } });
  },
  Mint(call) {
    const f = call.op.fields;
    const contract = str(f.contract);
    const t = getToken(call.state, contract);
    if (!t) throw new OperationFailed(`unknown token contract ${contract}`);
    if (call.tx.from_address !== t.owner) throw new OperationFailed(`only the deployer ${t.owner} may mint ${contract}`);
    const amount = amt(f.amount);
    const supply = t.supply + amount;
    if (t.max_supply > 0n && supply > t.max_supply)
      throw new OperationFailed(`mint exceeds max_supply: supply ${t.supply} + ${amount} > ${t.max_supply}`);
    if (supply > MAX_U128) throw new OperationFailed('mint exceeds the u128 supply limit');
    const to = str(f.to);
    const have = tokenBalance(call.state, contract, to);
    putTokenBalance(call.state, contract, to, have, have + amount);
    putToken(call.state, { ...t, supply });
    call.emit({ type: TOKEN_EVENTS.mint, fields: { contract, to, amount: amount.toString() } });
  },
  Approve(call) {
    const f = call.op.fields;
    const contract = str(f.contract);
    requireToken(call, contract);
    const owner = call.tx.from_address;
    putTokenAllowance(call.state, contract, owner, str(f.spender), amt(f.amount));
    call.emit({
      type: TOKEN_EVENTS.approval,
      fields: { contract, owner, spender: str(f.spender), amount: amt(f.amount).toString() },
    });
  },
};

/**
 * Index terms: `token:<contract>` lists a token's balance movements (deploy, transfers, mints, burns:
 * the transfer feeds); `token-account:<address>` the balance movements an address takes part in (the
 * explorer's SRC-20 transfers tab of an address, as Blockscout and Etherscan show it). Approvals are not
 * listed: no feed shows them (their receipts keep them). The account terms cost two postings per transfer
 * in the commit, not in execution (docs/tokens-and-staking.md).
 */
function indexTerms(e: NativeEvent): string[] {
  const f = e.fields;
  switch (e.type) {
    case TOKEN_EVENTS.deploy:
      return [`token:${f.contract}`, `token-account:${f.deployer}`];
    case TOKEN_EVENTS.transfer:
      return [`token:${f.contract}`, `token-account:${f.from}`, `token-account:${f.to}`];
    case TOKEN_EVENTS.mint:
      return [`token:${f.contract}`, `token-account:${f.to}`];
    case TOKEN_EVENTS.burn:
      return [`token:${f.contract}`, `token-account:${f.from}`];
    default:
      return [];
  }
}

export const tokenModule: OperationModule = {
  family: 'token',
  apply: (call) => {
    const handler = HANDLERS[call.op.name as OperationName];
    if (!handler) throw new OperationFailed(`${call.op.name} is not a token operation`);
    handler(call);
  },
  indexTerms,
};

/** The zero address as the counterparty of mints and burns in feeds. */
export const MINT_BURN_PARTY = ZERO_ADDRESS;
