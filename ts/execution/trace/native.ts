import { TOKEN_EVENTS, getToken, tokenAllowance, tokenBalance, tokenContractAddress } from '../../modules/index.js';
import {
  type NativeEvent,
  type NativeOperation,
  type OperationName,
  type SignedTransaction,
  ZERO_ADDRESS,
  baseToNative,
  weiToBase,
  txKind,
} from '../../ledger/index.js';
import { getAccount, type StateReader, StateOverlay } from '../../state/index.js';
import { traceNftOperation } from './nft.js';
import { type TraceSite, applyUntraced, blockStart, runSync } from './run.js';

/** Account fields of a native trace (spec: balance_base, nonce). */
interface NativeAccountView {
  balance_base: bigint;
  nonce: bigint;
}

function accounts(state: StateReader, addresses: readonly string[]): Record<string, NativeAccountView> {
  const out: Record<string, NativeAccountView> = {};
  for (const a of addresses) {
    const acc = getAccount(state, a);
    out[a] = { balance_base: weiToBase(acc.balance), nonce: acc.nonce };
  }
  return out;
}

/**
 * native_traceTransaction of a NativeTransfer (the only native operation the chain executes today; the
 * token, staking and NFT modules are not active): the two accounts before and after, and the fee split
 * the block applies at its end (floor(fee/2) to the proposer, the rest burned). Bounded: two accounts.
 */
export async function traceNativeTransfer(site: TraceSite, tx: SignedTransaction): Promise<Record<string, unknown>> {
  const state = blockStart(site);
  await applyUntraced(site.env, state, site.store, site.prefix, site.deadline);
  const parties = [...new Set([tx.from_address, tx.to_address])];
  const pre = await runSync(site.store, () => accounts(state, parties));
  await applyUntraced(site.env, state, site.store, [tx], site.deadline);
  const post = await runSync(site.store, () => accounts(state, parties));
  const toValidator = tx.fee / 2n;
  return {
    op: 'NativeTransfer',
    txid: tx.txid,
    from: tx.from_address,
    to: tx.to_address,
    amount_base: tx.amount,
    amount_native: baseToNative(tx.amount),
    fee_base: tx.fee,
    pre_state: pre,
    post_state: post,
    fee_split: { burned_base: tx.fee - toValidator, validator_base: toValidator, validator: site.env.proposer },
    events: [],
  };
}

/** What a traced operation's receipt said: status and, on failure, the reason. */
function outcomeOf(receipt: { status: number; output: Uint8Array } | undefined): Record<string, unknown> {
  if (!receipt) return { status: 1 };
  return receipt.status === 1 ? { status: 1 } : { status: 0, error: Buffer.from(receipt.output).toString('utf8') };
}

/** Spec shape of a token event in a trace: { type, from, to, amount } (mints from and burns to the zero address). */
function traceEvent(e: NativeEvent): Record<string, string> {
  const f = e.fields;
  switch (e.type) {
    case TOKEN_EVENTS.transfer:
      return { type: 'Transfer', from: f.from, to: f.to, amount: f.amount };
    case TOKEN_EVENTS.mint:
      return { type: 'Mint', from: ZERO_ADDRESS, to: f.to, amount: f.amount };
    case TOKEN_EVENTS.burn:
      return { type: 'Burn', from: f.from, to: ZERO_ADDRESS, amount: f.amount };
    case TOKEN_EVENTS.approval:
      return { type: 'Approval', from: f.owner, to: f.spender, amount: f.amount };
    case TOKEN_EVENTS.deploy:
      return { type: 'Deploy', from: ZERO_ADDRESS, to: f.deployer, amount: f.supply };
    default:
      return { type: e.type, ...f };
  }
}

const TOKEN_TRACE_OP: Partial<Record<OperationName, string>> = {
  Transfer: 'SRC20Transfer',
  TransferFrom: 'SRC20TransferFrom',
  Mint: 'SRC20Mint',
  Burn: 'SRC20Burn',
  Approve: 'SRC20Approve',
  Deploy: 'SRC20Deploy',
};

function tokenBalances(state: StateReader, contract: string, parties: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const a of parties) out[a] = tokenBalance(state, contract, a).toString();
  return out;
}

/**
 * native_traceTransaction of an SRC-20 operation (auxiliary spec part A): the token balances of every
 * party before and after, the token's supply before and after, the events, the fee and its split.
 * Deploy has the spec's SRC20Deploy shape. A failed operation (status 0) shows equal pre and post values
 * and its reason. Bounded: at most three parties.
 */
export async function traceTokenOperation(
  site: TraceSite,
  tx: SignedTransaction,
  op: NativeOperation,
  receipt?: { status: number; output: Uint8Array; events?: NativeEvent[] },
): Promise<Record<string, unknown>> {
  const state = blockStart(site);
  await applyUntraced(site.env, state, site.store, site.prefix, site.deadline);
  const f = op.fields;
  const toValidator = tx.fee / 2n;
  const common = {
    txid: tx.txid,
    fee_base: tx.fee,
    fee_split: { burned_base: tx.fee - toValidator, validator_base: toValidator, validator: site.env.proposer },
    ...outcomeOf(receipt),
  };
  if (op.name === 'Deploy') {
    const contract = tokenContractAddress(tx.from_address, tx.nonce);
    await applyUntraced(site.env, state, site.store, [tx], site.deadline);
    return {
      op: 'SRC20Deploy',
      contract,
      deployer: tx.from_address,
      token: {
        name: f.name,
        symbol: f.symbol,
        decimals: Number(f.decimals),
        initial_supply: String(f.supply),
        max_supply: String(f.max_supply),
      },
      genesis_holder: tx.from_address,
      ...common,
      events: (receipt?.events ?? []).map(traceEvent),
    };
  }
  const contract = f.contract as string;
  const from = (f.from as string | undefined) ?? tx.from_address;
  const to = (f.to as string | undefined) ?? (f.spender as string | undefined) ?? ZERO_ADDRESS;
  const parties = [...new Set([from, to, tx.from_address].filter((a) => a !== ZERO_ADDRESS))];
  const allowanceOwner = op.name === 'Approve' ? tx.from_address : from;
  const allowanceSpender = op.name === 'Approve' ? (f.spender as string) : tx.from_address;
  const read = () => ({
    token: getToken(state, contract),
    balances: tokenBalances(state, contract, parties),
    allowance: tokenAllowance(state, contract, allowanceOwner, allowanceSpender),
  });
  const { token: before, balances: preBalances, allowance: preAllowance } = await runSync(site.store, read);
  await applyUntraced(site.env, state, site.store, [tx], site.deadline);
  const { token: after, balances: postBalances, allowance: postAllowance } = await runSync(site.store, read);
  const out: Record<string, unknown> = {
    op: TOKEN_TRACE_OP[op.name] ?? op.name,
    contract,
    from,
    to,
    amount: String(f.amount),
    pre_balances: preBalances,
    post_balances: postBalances,
    token: {
      symbol: before?.symbol ?? null,
      decimals: before?.decimals ?? null,
      total_supply_before: before ? before.supply.toString() : null,
      total_supply_after: after ? after.supply.toString() : null,
    },
    ...common,
    events: (receipt?.events ?? []).map(traceEvent),
  };
  if (op.name === 'Approve' || op.name === 'TransferFrom') {
    out.allowance = {
      owner: allowanceOwner,
      spender: allowanceSpender,
      before: preAllowance.toString(),
      after: postAllowance.toString(),
    };
  }
  return out;
}

/** native_traceTransaction of any native operation: the trace of its kind (token, NFT, or a transfer). */
export function traceNative(
  site: TraceSite,
  tx: SignedTransaction,
  receipt?: { status: number; output: Uint8Array; events?: NativeEvent[] },
): Promise<Record<string, unknown>> {
  const kind = txKind(tx);
  if (kind.kind === 'token') return traceTokenOperation(site, tx, kind.op, receipt);
  if (kind.kind === 'nft') return traceNftOperation(site, tx);
  return traceNativeTransfer(site, tx);
}
