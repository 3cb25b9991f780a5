/**
 * `native-wallet nft …`: the eight SRC-721 operations, signed with the key file and sent to POST
 * /nft/submit (docs/nft.md), then followed to inclusion and reported with the operation's outcome
 * (native_traceTransaction: applied, or failed with its reason); and `show` for collections, tokens
 * and the tokens of an address.
 */
import { collectionAddress } from '../modules/index.js';
import { type KeyPair, NFT_COLLECTION_RE, decodeOperation, minimumFee, signTransaction, ZERO_ADDRESS } from '../ledger/index.js';
import { isAddress, stringifyExact } from '../util/index.js';
import { WalletUsageError, parseAmount, showBase } from './amounts.js';
import type { NodeClient } from './client.js';
import { expectOk, signingContext, waitForInclusion } from './submit.js';

export const NFT_USAGE = `  nft deploy --name N --symbol S [--max-supply N] [--royalty-bps N] [--royalty-recipient ADDR] [--base-uri URI]
  nft mint --collection C [--to ADDR] [--token-id N] [--uri URI]   (--to defaults to the key's address)
  nft transfer --collection C --token-id N --to ADDR
  nft burn --collection C --token-id N
  nft approve --collection C --token-id N (--spender ADDR [--expiry-height H] | --revoke)
  nft operator --collection C --operator ADDR [--revoke]
  nft freeze --collection C
  nft base-uri --collection C --base-uri URI
  nft show COLLECTION [TOKEN_ID] | nft show ADDRESS   collection, token, or the tokens an address owns
                              (NFT commands: the fee defaults to the operation's minimum; --no-wait, --timeout)
`;

/**
 * The wallet options the NFT commands add to its table (--name, --symbol, --max-supply, --spender, --to
 * and --fee are the token commands' too).
 */
export const NFT_OPTIONS = {
  'royalty-bps': { type: 'string' },
  'royalty-recipient': { type: 'string' },
  'base-uri': { type: 'string' },
  collection: { type: 'string' },
  'token-id': { type: 'string' },
  uri: { type: 'string' },
  'expiry-height': { type: 'string' },
  operator: { type: 'string' },
  revoke: { type: 'boolean' },
} as const;

type Values = Record<string, string | boolean | undefined>;

export interface NftCommandContext {
  client: NodeClient;
  loadSigner: () => KeyPair;
  raw: boolean;
  out: (line: string) => void;
}

const need = (v: Values, name: string): string => {
  const x = v[name];
  if (typeof x !== 'string' || x === '') throw new WalletUsageError(`this command needs --${name}`);
  return x;
};

/** A u64 option as an exact integer (the operation's decoder checks the range). */
function integer(v: Values, name: string, def?: bigint): bigint {
  const x = v[name];
  if (x === undefined) {
    if (def === undefined) throw new WalletUsageError(`this command needs --${name}`);
    return def;
  }
  if (typeof x !== 'string' || !/^\d+$/.test(x))
    throw new WalletUsageError(`--${name} must be a whole number, got ${JSON.stringify(x)}`);
  return BigInt(x);
}

function address(v: Values, name: string, def?: string): string {
  const x = v[name] ?? def;
  if (!isAddress(x)) throw new WalletUsageError(`--${name} must be 0x + 40 hex`);
  return x.toLowerCase();
}

const collection = (v: Values): string => {
  const c = need(v, 'collection');
  if (!NFT_COLLECTION_RE.test(c)) throw new WalletUsageError('--collection must be SRC721_ + 40 hex');
  return c;
};

/** The operation a command names: its variant and fields (the wire format of docs/nft.md). */
function operationOf(cmd: string, v: Values, sender: string): [string, Record<string, unknown>] {
  switch (cmd) {
    case 'deploy':
      return [
        'DeployNft',
        {
          name: need(v, 'name'),
          symbol: need(v, 'symbol'),
          max_supply: integer(v, 'max-supply', 0n),
          royalty_bps: integer(v, 'royalty-bps', 0n),
          royalty_recipient: address(v, 'royalty-recipient', sender),
          base_uri: typeof v['base-uri'] === 'string' ? v['base-uri'] : '',
        },
      ];
    case 'mint': {
      const f: Record<string, unknown> = { collection: collection(v), to: address(v, 'to', sender) };
      if (v['token-id'] !== undefined) f.token_id = integer(v, 'token-id');
      if (v.uri !== undefined) f.token_uri_override = need(v, 'uri');
      return ['MintNft', f];
    }
    case 'transfer':
      return ['TransferNft', { collection: collection(v), token_id: integer(v, 'token-id'), to: address(v, 'to') }];
    case 'burn':
      return ['BurnNft', { collection: collection(v), token_id: integer(v, 'token-id') }];
    case 'approve': {
      if (v.revoke === true && v.spender !== undefined) throw new WalletUsageError('use --spender or --revoke, not both');
      const spender = v.revoke === true ? '' : address(v, 'spender');
      return [
        'ApproveNft',
        { collection: collection(v), token_id: integer(v, 'token-id'), spender, expiry_height: integer(v, 'expiry-height', 0n) },
      ];
    }
    case 'operator':
      return ['ApproveNftOperator', { collection: collection(v), operator: address(v, 'operator'), approved: v.revoke !== true }];
    case 'freeze':
      return ['FreezeNftCollection', { collection: collection(v) }];
    case 'base-uri':
      return [
        'UpdateNftBaseUri',
        { collection: collection(v), base_uri: typeof v['base-uri'] === 'string' ? v['base-uri'] : need(v, 'base-uri') },
      ];
    default:
      throw new WalletUsageError(`unknown nft command ${cmd} (see --help)`);
  }
}

/** `nft <command>`; returns the exit code. */
export async function runNft(positionals: string[], v: Values, ctx: NftCommandContext): Promise<number> {
  const [cmd, ...args] = positionals;
  if (cmd === undefined) throw new WalletUsageError('nft needs a command (see --help)');
  if (cmd === 'show') return show(ctx, args);
  const key = ctx.loadSigner();
  const [name, fields] = operationOf(cmd, v, key.address);
  const data = stringifyExact({ [name]: fields });
  let op: ReturnType<typeof decodeOperation>;
  try {
    op = decodeOperation(data);
  } catch (err) {
    throw new WalletUsageError((err as Error).message);
  }
  const fee = v.fee === undefined ? minimumFee({ kind: 'nft', op }) : parseAmount('fee', v.fee as string, true);
  const { client, out } = ctx;
  const { chainId, nonce } = await signingContext(client, key.address);
  const tx = signTransaction({ from: key.address, to: ZERO_ADDRESS, amount: 0n, fee, nonce, data, chain_id: chainId }, key);
  const res = await client.post<{ error?: string }>('/nft/submit', { transaction: tx });
  if (res.status !== 200) {
    out(`rejected (${res.status}): ${res.body?.error ?? ''}`);
    return 1;
  }
  out(`txid: ${tx.txid}`);
  if (name === 'DeployNft') out(`collection: ${collectionAddress(key.address, nonce)}`);
  if (v['no-wait'] === true) return 0;
  const height = await waitForInclusion(client, tx.txid, Number(v.timeout ?? 30));
  if (height === null) {
    out('not included before the timeout');
    return 1;
  }
  const trace = await client.rpc<{ status: number; failure?: string; token_id?: bigint }>('native_traceTransaction', [
    `0x${tx.txid}`,
  ]);
  if (trace && Number(trace.status) === 0) {
    out(`included in block ${height} but FAILED: ${trace.failure}; fee paid ${showBase(fee, ctx.raw)}`);
    return 1;
  }
  if (name === 'MintNft' && trace?.token_id !== undefined) out(`token id: ${trace.token_id}`);
  out(`included in block ${height}; fee paid ${showBase(fee, ctx.raw)}`);
  return 0;
}

function printObject(out: (l: string) => void, o: Record<string, unknown>): void {
  const width = Math.max(...Object.keys(o).map((k) => k.length));
  for (const [k, val] of Object.entries(o)) {
    const text = val === null ? '-' : typeof val === 'object' ? stringifyExact(val) : String(val);
    out(`${k.padEnd(width)} ${text}`);
  }
}

async function show(ctx: NftCommandContext, args: string[]): Promise<number> {
  const [target, id] = args;
  const { client, out } = ctx;
  let path: string;
  if (target !== undefined && NFT_COLLECTION_RE.test(target)) {
    if (id !== undefined && !/^\d+$/.test(id)) throw new WalletUsageError('TOKEN_ID must be a whole number');
    path = id === undefined ? `/nft/collection/${target}` : `/nft/token/${target}/${id}`;
  } else if (isAddress(target) && id === undefined) path = `/nft/address/${target}?limit=100`;
  else throw new WalletUsageError('nft show needs a collection (SRC721_…), optionally a token id, or an address');
  const r = await client.get<Record<string, unknown>>(path);
  if (r.status === 404) {
    out('not found');
    return 1;
  }
  const body = expectOk(client, r);
  if (!Array.isArray(body.tokens)) {
    printObject(out, body);
    return 0;
  }
  const tokens = body.tokens as { collection: string; token_id: bigint; token_uri: string | null }[];
  out(`${body.total} tokens${tokens.length < Number(body.total) ? ` (first ${tokens.length})` : ''}`);
  for (const t of tokens) out(`${t.collection} #${t.token_id}${t.token_uri ? ` ${t.token_uri}` : ''}`);
  return 0;
}
