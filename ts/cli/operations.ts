/**
 * Wallet commands for native operations: `token deploy|transfer|transfer-from|mint|burn|approve`,
 * `stake register|delegate|undelegate|redelegate|claim|commission|unjail`, `validators`, `delegations`.
 * Amounts are human-readable: coins for staking (`--amount 1.5`), token units by the token's decimals
 * for tokens (`--amount 1.5` of a 2-decimal token = 150 base units); `--raw` takes base units.
 */
import { tokenContractAddress } from '../modules/index.js';
import { type KeyPair, minimumFee, signTransaction, txKind, BASE_PER_COIN, ZERO_ADDRESS } from '../ledger/index.js';
import { isAddress } from '../util/index.js';
import { WalletUsageError, formatBase, parseAmount } from './amounts.js';
import type { NodeClient, Reply } from './client.js';

type Out = (line: string) => void;

export interface OperationArgs {
  name?: string;
  symbol?: string;
  decimals?: string;
  supply?: string;
  'max-supply'?: string;
  contract?: string;
  to?: string;
  from?: string;
  spender?: string;
  validator?: string;
  amount?: string;
  commission?: string;
  fee?: string;
  'no-wait'?: boolean;
  timeout?: string;
}

/** A decimal amount with `decimals` fraction digits as an integer (`1.5`, 2 -> 150). */
export function parseUnits(flag: string, raw: string | undefined, decimals: number, allowZero = false): bigint {
  if (raw === undefined) throw new WalletUsageError(`--${flag} is required`);
  const m = /^(\d+)(?:\.(\d+))?$/.exec(raw.trim());
  if (!m) throw new WalletUsageError(`--${flag} must be a non-negative decimal number, got ${JSON.stringify(raw)}`);
  const frac = m[2] ?? '';
  if (frac.length > decimals)
    throw new WalletUsageError(`--${flag} has more than ${decimals} decimals, got ${JSON.stringify(raw)}`);
  const n = BigInt(m[1]) * 10n ** BigInt(decimals) + BigInt(frac.padEnd(decimals, '0') || '0');
  if (n === 0n && !allowZero) throw new WalletUsageError(`--${flag} must be greater than zero`);
  return n;
}

/** Coins (`1.5`, `1.5NATIVE`) or, with --raw, base units. */
const coins = (flag: string, raw: string | undefined, rawUnits: boolean): bigint => {
  if (raw === undefined) throw new WalletUsageError(`--${flag} is required`);
  return rawUnits || /native$/i.test(raw.trim()) ? parseAmount(flag, raw) : parseUnits(flag, raw, 8);
};

const address = (flag: string, v: string | undefined): string => {
  if (!isAddress(v)) throw new WalletUsageError(`--${flag} must be 0x + 40 hex`);
  return v.toLowerCase();
};

const contractOf = (v: string | undefined): string => {
  if (!v || !/^SRC20_[0-9a-fA-F]{40}$/.test(v)) throw new WalletUsageError('--contract must be SRC20_ + 40 hex');
  return v;
};

function ok<T>(client: NodeClient, r: Reply<T>): T {
  if (r.status === 200 && r.body !== null) return r.body;
  const detail = (r.body as { error?: string } | null)?.error;
  throw new Error(`${client.baseUrl} answered HTTP ${r.status}${detail ? `: ${detail}` : ''}`);
}

async function tokenDecimals(client: NodeClient, contract: string, rawUnits: boolean): Promise<number> {
  if (rawUnits) return 0;
  const t = await client.get<{ decimals: number }>(`/tokens/${contract}`);
  if (t.status === 404) throw new WalletUsageError(`unknown token contract ${contract}`);
  return ok(client, t).decimals;
}

/** Sign the operation with the next nonce, submit it and (unless --no-wait) wait for its receipt status. */
async function submit(client: NodeClient, key: KeyPair, op: unknown, args: OperationArgs, out: Out): Promise<number> {
  const data = JSON.stringify(op, (_k, v) =>
    typeof v === 'bigint' ? (v > BigInt(Number.MAX_SAFE_INTEGER) ? v.toString() : Number(v)) : v,
  );
  const status = ok(client, await client.get<{ chain_id: number }>('/native_status'));
  const pending = ok(client, await client.get<{ transactions: { from_address: string }[] }>('/mempool'));
  const nonce = ok(client, await client.get<{ nonce: bigint }>(`/accounts/${key.address}/nonce`));
  const inPool = pending.transactions.filter((t) => t.from_address === key.address).length;
  const unsigned = { from: key.address, to: ZERO_ADDRESS, amount: 0n, data, chain_id: status.chain_id };
  const probe = signTransaction({ ...unsigned, fee: 0n, nonce: 0n }, key);
  const fee = args.fee === undefined ? minimumFee(txKind(probe)) : parseAmount('fee', args.fee, true);
  const txNonce = BigInt(nonce.nonce) + BigInt(inPool);
  const tx = signTransaction({ ...unsigned, fee, nonce: txNonce }, key);
  const res = await client.post<{ error?: string; contract?: string }>('/transactions', { transaction: tx });
  if (res.status !== 200) {
    out(`rejected (${res.status}): ${res.body?.error ?? ''}`);
    return 1;
  }
  out(`txid: ${tx.txid}`);
  // A token deploy's address follows from the deployer and the nonce (as `nft deploy` prints its collection).
  if (typeof op === 'object' && op !== null && 'Deploy' in op) out(`contract: ${tokenContractAddress(key.address, txNonce)}`);
  if (args['no-wait']) return 0;
  const deadline = Date.now() + Number(args.timeout ?? 30) * 1000;
  while (Date.now() < deadline) {
    const r = await client.get<{ status: string; block_index: number }>(`/transactions/${tx.txid}`);
    if (r.body?.status === 'confirmed') {
      const rc = await client.rpc<{ status: string }>('eth_getTransactionReceipt', [`0x${tx.txid}`]);
      const failed = rc?.status === '0x0';
      out(
        `included in block ${r.body.block_index}${failed ? ' but the operation FAILED (status 0)' : ''}; fee ${formatBase(fee)}`,
      );
      return failed ? 1 : 0;
    }
    await new Promise((r2) => setTimeout(r2, 200));
  }
  out('not included before the timeout');
  return 1;
}

/** A wallet command over an operation family: sub-command, signer, arguments, --raw, output. */
type OperationCommand = (
  client: NodeClient,
  sub: string | undefined,
  key: () => KeyPair,
  a: OperationArgs,
  raw: boolean,
  out: Out,
) => Promise<number>;

/** `token <sub>` */
export const tokenCommand: OperationCommand = async (client, sub, key, a, raw, out) => {
  switch (sub) {
    case 'deploy': {
      if (!a.name || !a.symbol) throw new WalletUsageError('token deploy needs --name and --symbol');
      const decimals = Number(a.decimals ?? 8);
      if (!Number.isInteger(decimals) || decimals < 0 || decimals > 18) throw new WalletUsageError('--decimals must be 0..18');
      const d = raw ? 0 : decimals;
      const supply = parseUnits('supply', a.supply ?? '0', d, true);
      const max = parseUnits('max-supply', a['max-supply'] ?? '0', d, true);
      return submit(client, key(), { Deploy: { name: a.name, symbol: a.symbol, decimals, supply, max_supply: max } }, a, out);
    }
    case 'transfer':
    case 'mint': {
      const contract = contractOf(a.contract);
      const amount = parseUnits('amount', a.amount, await tokenDecimals(client, contract, raw));
      const variant = sub === 'mint' ? 'Mint' : 'Transfer';
      return submit(client, key(), { [variant]: { contract, to: address('to', a.to), amount } }, a, out);
    }
    case 'transfer-from': {
      const contract = contractOf(a.contract);
      const amount = parseUnits('amount', a.amount, await tokenDecimals(client, contract, raw));
      return submit(
        client,
        key(),
        { TransferFrom: { contract, from: address('from', a.from), to: address('to', a.to), amount } },
        a,
        out,
      );
    }
    case 'burn': {
      const contract = contractOf(a.contract);
      const amount = parseUnits('amount', a.amount, await tokenDecimals(client, contract, raw));
      return submit(client, key(), { Burn: { contract, amount } }, a, out);
    }
    case 'approve': {
      const contract = contractOf(a.contract);
      const amount = parseUnits('amount', a.amount, await tokenDecimals(client, contract, raw), true);
      return submit(client, key(), { Approve: { contract, spender: address('spender', a.spender), amount } }, a, out);
    }
    default:
      throw new WalletUsageError('token needs deploy|transfer|transfer-from|mint|burn|approve');
  }
};

/** `stake <sub>` */
export const stakeCommand: OperationCommand = async (client, sub, key, a, raw, out) => {
  const bps = (): bigint => {
    if (a.commission === undefined || !/^\d+$/.test(a.commission) || Number(a.commission) > 10_000)
      throw new WalletUsageError('--commission must be basis points 0..10000 (500 = 5%)');
    return BigInt(a.commission);
  };
  switch (sub) {
    case 'register':
      if (!a.name) throw new WalletUsageError('stake register needs --name');
      return submit(
        client,
        key(),
        { RegisterValidator: { name: a.name, stake: coins('amount', a.amount, raw), commission_bps: bps() } },
        a,
        out,
      );
    case 'delegate':
    case 'undelegate': {
      const variant = sub === 'delegate' ? 'Delegate' : 'Undelegate';
      const body = { validator: address('validator', a.validator), amount: coins('amount', a.amount, raw) };
      return submit(client, key(), { [variant]: body }, a, out);
    }
    case 'redelegate':
      return submit(
        client,
        key(),
        {
          Redelegate: {
            from_validator: address('from', a.from),
            to_validator: address('to', a.to),
            amount: coins('amount', a.amount, raw),
          },
        },
        a,
        out,
      );
    case 'claim':
      return submit(
        client,
        key(),
        { ClaimRewards: { validator: a.validator ? address('validator', a.validator) : null } },
        a,
        out,
      );
    case 'commission':
      return submit(client, key(), { UpdateCommission: { commission_bps: bps() } }, a, out);
    case 'unjail':
      return submit(client, key(), { Unjail: {} }, a, out);
    default:
      throw new WalletUsageError('stake needs register|delegate|undelegate|redelegate|claim|commission|unjail');
  }
};

const show = (base: bigint | number, raw: boolean): string => (raw ? String(base) : formatBase(BigInt(base)));

/** `validators`: the validator set with stake, commission, uptime and status. */
export async function validatorsCommand(client: NodeClient, raw: boolean, out: Out): Promise<number> {
  const r = ok(
    client,
    await client.get<{
      consensus: string;
      epoch_number: number;
      validators: { address: string; name: string; status: string; stake: bigint; commission_bps: number; uptime: number }[];
    }>('/staking/validators'),
  );
  out(`${r.consensus}, epoch ${r.epoch_number}, ${r.validators.length} validators`);
  for (const v of r.validators)
    out(
      `${v.address} ${v.name.padEnd(12)} ${v.status.padEnd(10)} stake ${show(v.stake, raw)} commission ${(v.commission_bps / 100).toFixed(2)}% uptime ${(v.uptime * 100).toFixed(1)}%`,
    );
  return 0;
}

/** `delegations [ADDRESS]`: delegations with pending rewards, and unbonding entries. */
export async function delegationsCommand(client: NodeClient, who: string, raw: boolean, out: Out): Promise<number> {
  const d = ok(
    client,
    await client.get<{
      delegations: { validator: string; validator_name: string; amount: bigint; pending_reward: bigint }[];
      total_delegated: bigint;
      pending_rewards: bigint;
    }>(`/staking/delegations/${who}`),
  );
  for (const x of d.delegations)
    out(`${x.validator} ${x.validator_name.padEnd(12)} ${show(x.amount, raw)} pending reward ${show(x.pending_reward, raw)}`);
  out(`total delegated ${show(d.total_delegated, raw)}, pending rewards ${show(d.pending_rewards, raw)}`);
  const u = ok(
    client,
    await client.get<{ entries: { validator: string; amount: bigint; complete_epoch: number }[] }>(`/staking/unbonding/${who}`),
  );
  for (const e of u.entries) out(`unbonding ${show(e.amount, raw)} from ${e.validator}, released at epoch ${e.complete_epoch}`);
  return 0;
}

export const STAKE_UNIT = BASE_PER_COIN;
