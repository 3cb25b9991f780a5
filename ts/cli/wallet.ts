#!/usr/bin/env node
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sha256 } from '../crypto/index.js';
import {
  type KeyPair,
  keyPairFromMnemonic,
  keyPairFromPrivate,
  privateKeyHex,
  randomKeyPair,
  signTransaction,
  MIN_TX_FEE_BASE,
  baseToWei,
} from '../ledger/index.js';
import { accountKeyBytes, decodeAccount, type StateProof, verifyStateProof } from '../state/index.js';
import { isAddress, isHash, stringifyExact } from '../util/index.js';
import { COIN_TICKER, WalletUsageError, parseAmount, showBase, showWei } from './amounts.js';
import { NodeClient } from './client.js';
import { NFT_OPTIONS, NFT_USAGE, runNft } from './nft.js';
import { delegationsCommand, stakeCommand, tokenCommand, validatorsCommand } from './operations.js';
import { expectOk, signingContext, waitForInclusion } from './submit.js';

/** The wallet ships with the node and carries its version. */
const WALLET_VERSION = '0.1.0';

const USAGE = `native-wallet <command> [options]

Commands:
  new                         create a key and save it to the key file
  import --private-key HEX    import a private key
  import --mnemonic "WORDS" [--index N]   import m/44'/60'/0'/0/N of a BIP-39 mnemonic
  address                     show the key file's address
  balance [ADDRESS]           balance (in ${COIN_TICKER}; base units with --raw)
  nonce [ADDRESS]             committed nonce
  send --to ADDR --amount AMOUNT [--fee AMOUNT] [--no-wait]   sign, submit, wait for inclusion
  tx TXID                     show a transaction and the fee it paid (--json: the node's full record)
  proof [ADDRESS]             fetch an account proof and verify it offline against the block's state root
  token deploy --name N --symbol S [--decimals 8] --supply X [--max-supply Y]
  token transfer|mint --contract SRC20_… --to ADDR --amount X
  token transfer-from --contract SRC20_… --from ADDR --to ADDR --amount X
  token burn --contract SRC20_… --amount X
  token approve --contract SRC20_… --spender ADDR --amount X
  stake register --name N --amount COINS --commission BPS
  stake delegate|undelegate --validator ADDR --amount COINS
  stake redelegate --from ADDR --to ADDR --amount COINS
  stake claim [--validator ADDR]     rewards (and commission) of one or every validator
  stake commission --commission BPS  (at most 100 bps of change, once per epoch)
  stake unjail
  validators                  the validator set with stake, commission, uptime and status
  delegations [ADDRESS]       delegations, pending rewards and unbonding entries
${NFT_USAGE}

Amounts: a whole number of base units (150000000) or coins with the ticker (1.5${COIN_TICKER});
1 ${COIN_TICKER} = 100,000,000 base units. The fee defaults to the minimum, 10000 base units (deploys 100000).
Operation amounts are human-readable: stake amounts in coins (--amount 1.5), token amounts in token units
by the token's decimals (--amount 1.5 of a 2-decimal token = 150); --raw takes base units instead.

Options:
  --url URL        node URL (default $NATIVE_URL or http://127.0.0.1:8545)
  --key-file PATH  key file (default $NATIVE_WALLET_KEY or ~/.native-wallet/key.json; stored unencrypted, mode 0600)
  --api-key KEY    X-API-Key for submissions (default $NATIVE_API_KEY)
  --timeout SEC    how long send waits for inclusion (default 30)
  --raw            amounts in base units instead of ${COIN_TICKER}
  --json           tx: print the node's JSON record
  -h, --help       this help
  --version        the wallet's version
`;

type Out = (line: string) => void;

interface TxRecord {
  txid: string;
  status: string;
  block_index: number | null;
  confirmations: number;
  from_address: string;
  to_address: string;
  amount: bigint;
  fee: bigint;
  nonce: bigint;
  data: string;
}

function saveKey(path: string, key: KeyPair): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ address: key.address, private_key: privateKeyHex(key) }, null, 2)}\n`, { mode: 0o600 });
}

function loadKey(path: string): KeyPair {
  if (!existsSync(path)) throw new WalletUsageError(`no key file at ${path} (run "native-wallet new" or "import")`);
  const { private_key } = JSON.parse(readFileSync(path, 'utf8')) as { private_key: string };
  return keyPairFromPrivate(private_key);
}

/**
 * `--amount -5` is not a negative amount to parseArgs but a missing value followed by an unknown option; say
 * what the user meant instead of parseArgs' puzzle.
 */
function refuseNegativeAmounts(argv: string[]): void {
  argv.forEach((a, i) => {
    const next = argv[i + 1];
    if ((a === '--amount' || a === '--fee') && next !== undefined && /^-\d/.test(next)) {
      throw new WalletUsageError(`${a} must not be negative, got ${JSON.stringify(next)}`);
    }
  });
}

/** Run one wallet command; returns the process exit code. Exported for tests. */
export async function runWallet(argv: string[], env: NodeJS.ProcessEnv, out: Out): Promise<number> {
  refuseNegativeAmounts(argv);
  let parsed: ReturnType<typeof parseWalletArgs>;
  try {
    parsed = parseWalletArgs(argv);
  } catch (err) {
    throw new WalletUsageError(`${(err as Error).message.split('\n')[0]} (see --help)`);
  }
  const { values, positionals } = parsed;
  const [cmd, arg] = positionals;
  if (values.version) {
    out(`native-wallet ${WALLET_VERSION}`);
    return 0;
  }
  if (!cmd || values.help) {
    out(USAGE);
    return values.help ? 0 : 2;
  }
  const raw = values.raw === true;
  const keyFile = values['key-file'] ?? env.NATIVE_WALLET_KEY ?? join(homedir(), '.native-wallet', 'key.json');
  const client = new NodeClient(values.url ?? env.NATIVE_URL ?? 'http://127.0.0.1:8545', values['api-key'] ?? env.NATIVE_API_KEY);
  const addressArg = (): string => {
    const a = arg ?? loadKey(keyFile).address;
    if (!isAddress(a)) throw new WalletUsageError('address must be 0x + 40 hex');
    return a.toLowerCase();
  };
  switch (cmd) {
    case 'new': {
      const key = randomKeyPair();
      saveKey(keyFile, key);
      out(`address: ${key.address}\nsaved to ${keyFile}`);
      return 0;
    }
    case 'import': {
      let key: KeyPair;
      if (values['private-key']) key = keyPairFromPrivate(values['private-key']);
      else if (values.mnemonic) key = keyPairFromMnemonic(values.mnemonic, Number(values.index ?? 0));
      else throw new WalletUsageError('import needs --private-key or --mnemonic');
      saveKey(keyFile, key);
      out(`address: ${key.address}\nsaved to ${keyFile}`);
      return 0;
    }
    case 'address':
      out(loadKey(keyFile).address);
      return 0;
    case 'balance': {
      const r = expectOk(client, await client.get<{ balance: bigint }>(`/accounts/${addressArg()}/balance`));
      out(showBase(BigInt(r.balance), raw));
      return 0;
    }
    case 'nonce': {
      const r = expectOk(client, await client.get<{ nonce: bigint }>(`/accounts/${addressArg()}/nonce`));
      out(String(r.nonce));
      return 0;
    }
    case 'tx':
      return showTx(client, arg, values.json === true, raw, out);
    case 'send':
      return send(client, () => loadKey(keyFile), values, raw, out);
    case 'proof':
      return proof(client, addressArg(), raw, out);
    case 'nft':
      return runNft(positionals.slice(1), values, { client, loadSigner: () => loadKey(keyFile), raw, out });
    case 'token':
      return tokenCommand(client, arg, () => loadKey(keyFile), values, raw, out);
    case 'stake':
      return stakeCommand(client, arg, () => loadKey(keyFile), values, raw, out);
    case 'validators':
      return validatorsCommand(client, raw, out);
    case 'delegations':
      return delegationsCommand(client, addressArg(), raw, out);
    default:
      out(`unknown command ${cmd}\n\n${USAGE}`);
      return 2;
  }
}

function parseWalletArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      url: { type: 'string' },
      'key-file': { type: 'string' },
      'api-key': { type: 'string' },
      'private-key': { type: 'string' },
      mnemonic: { type: 'string' },
      index: { type: 'string' },
      to: { type: 'string' },
      from: { type: 'string' },
      name: { type: 'string' },
      symbol: { type: 'string' },
      decimals: { type: 'string' },
      supply: { type: 'string' },
      'max-supply': { type: 'string' },
      contract: { type: 'string' },
      spender: { type: 'string' },
      validator: { type: 'string' },
      commission: { type: 'string' },
      amount: { type: 'string' },
      fee: { type: 'string' },
      'no-wait': { type: 'boolean' },
      timeout: { type: 'string' },
      raw: { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean' },
      ...NFT_OPTIONS,
    },
  });
}

/** The fee a confirmed transaction paid, in wei: EVM gas used times its price, else the native fee. */
async function feePaidWei(client: NodeClient, tx: TxRecord): Promise<bigint | null> {
  if (!tx.data.startsWith('EVM:')) return baseToWei(BigInt(tx.fee));
  const rc = await client.rpc<{ gasUsed: string; effectiveGasPrice: string }>('eth_getTransactionReceipt', [`0x${tx.txid}`]);
  return rc ? BigInt(rc.gasUsed) * BigInt(rc.effectiveGasPrice) : null;
}

async function showTx(client: NodeClient, txid: string | undefined, json: boolean, raw: boolean, out: Out): Promise<number> {
  if (!isHash(txid)) throw new WalletUsageError('tx needs a 64-hex txid');
  const r = await client.get<TxRecord>(`/transactions/${txid}`);
  if (r.status === 404) {
    out('not found');
    return 1;
  }
  const tx = expectOk(client, r);
  if (json) {
    out(stringifyExact(tx));
    return 0;
  }
  const confirmed = tx.status === 'confirmed';
  const rows: [string, string][] = [
    ['txid', tx.txid],
    ['status', confirmed ? `confirmed in block ${tx.block_index} (${tx.confirmations} confirmations)` : 'pending in the mempool'],
    ['from', tx.from_address],
    ['to', tx.to_address],
    ['amount', showBase(BigInt(tx.amount), raw)],
    ['nonce', String(tx.nonce)],
  ];
  const paid = confirmed ? await feePaidWei(client, tx) : null;
  if (paid !== null) rows.push(['fee paid', showWei(paid, raw)]);
  else rows.push(['max fee', `${showBase(BigInt(tx.fee), raw)} (the fee paid is known once included)`]);
  for (const [k, v] of rows) out(`${k.padEnd(9)} ${v}`);
  return 0;
}

async function send(
  client: NodeClient,
  loadSigner: () => KeyPair,
  values: { to?: string; amount?: string; fee?: string; 'no-wait'?: boolean; timeout?: string },
  raw: boolean,
  out: Out,
): Promise<number> {
  if (!isAddress(values.to)) throw new WalletUsageError('--to must be 0x + 40 hex');
  if (values.amount === undefined) throw new WalletUsageError('send needs --amount');
  const amount = parseAmount('amount', values.amount);
  const fee = values.fee === undefined ? MIN_TX_FEE_BASE : parseAmount('fee', values.fee, true);
  // The key file is read once the arguments are known to be usable.
  const key = loadSigner();
  const { chainId, nonce } = await signingContext(client, key.address);
  const tx = signTransaction({ from: key.address, to: values.to, amount, fee, nonce, chain_id: chainId }, key);
  const res = await client.post<{ success: boolean; error?: string }>('/transactions', { transaction: tx });
  if (res.status !== 200) {
    out(`rejected (${res.status}): ${res.body?.error ?? ''}`);
    return 1;
  }
  out(`txid: ${tx.txid}`);
  if (values['no-wait']) return 0;
  const height = await waitForInclusion(client, tx.txid, Number(values.timeout ?? 30));
  if (height !== null) {
    out(`included in block ${height}; fee paid ${showBase(fee, raw)}`);
    return 0;
  }
  out('not included before the timeout');
  return 1;
}

async function proof(client: NodeClient, address: string, raw: boolean, out: Out): Promise<number> {
  const body = expectOk(client, await client.get<{ height: number; proof: StateProof | null }>(`/address/${address}/proof`));
  if (!body.proof) {
    out(`account ${address} does not exist at height ${body.height}`);
    return 1;
  }
  // Trust only the block header's state root, fetched separately, and the proof's own bytes.
  const block = expectOk(client, await client.get<{ state_root: string }>(`/chain/blocks/${body.height}`));
  const keyOk = body.proof.key === accountKeyBytes(address).toString('hex');
  const ok = keyOk && verifyStateProof(body.proof, block.state_root, sha256);
  const acc = decodeAccount(Buffer.from(body.proof.value, 'hex'));
  out(`height ${body.height} state_root ${block.state_root}`);
  out(`balance ${showWei(acc.balance, raw)} nonce ${acc.nonce}`);
  out(ok ? 'proof: VALID' : 'proof: INVALID');
  return ok ? 0 : 1;
}

const isMain = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  runWallet(process.argv.slice(2), process.env, (l) => process.stdout.write(`${l}\n`)).then(
    (code) => process.exit(code),
    (err) => {
      // Messages are written for the user; a stack trace would only hide them.
      process.stderr.write(`error: ${(err as Error).message}\n`);
      process.exit(err instanceof WalletUsageError ? 2 : 1);
    },
  );
}
