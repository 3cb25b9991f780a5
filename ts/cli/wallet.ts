#!/usr/bin/env node
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { sha256 } from '../crypto/index.js';
import { type KeyPair, keyPairFromMnemonic, keyPairFromPrivate, privateKeyHex, randomKeyPair } from '../ledger/keys.js';
import { signTransaction } from '../ledger/transaction.js';
import { MIN_TX_FEE_BASE } from '../ledger/units.js';
import { accountKeyBytes, decodeAccount } from '../state/accounts.js';
import { type StateProof, verifyStateProof } from '../state/trie.js';
import { isAddress, isHash } from '../util/hex.js';
import { stringifyExact } from '../util/json.js';
import { NodeClient } from './client.js';

const USAGE = `native-wallet <command> [options]

Commands:
  new                         create a key and save it to the key file
  import --private-key HEX    import a private key
  import --mnemonic "WORDS" [--index N]   import m/44'/60'/0'/0/N of a BIP-39 mnemonic
  address                     show the key file's address
  balance [ADDRESS]           balance in base units (1 coin = 1e8)
  nonce [ADDRESS]             committed nonce
  send --to ADDR --amount BASE [--fee BASE] [--no-wait]   sign, submit, wait for inclusion
  tx TXID                     show a transaction
  proof [ADDRESS]             fetch an account proof and verify it offline against the block's state root

Options:
  --url URL        node REST URL (default $NATIVE_URL or http://127.0.0.1:8545)
  --key-file PATH  key file (default $NATIVE_WALLET_KEY or ~/.native-wallet/key.json; stored unencrypted, mode 0600)
  --api-key KEY    X-API-Key for submissions (default $NATIVE_API_KEY)
  --timeout SEC    how long send waits for inclusion (default 30)
`;

type Out = (line: string) => void;

function saveKey(path: string, key: KeyPair): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, `${JSON.stringify({ address: key.address, private_key: privateKeyHex(key) }, null, 2)}\n`, { mode: 0o600 });
}

function loadKey(path: string): KeyPair {
  if (!existsSync(path)) throw new Error(`no key file at ${path} (run "native-wallet new" or "import")`);
  const { private_key } = JSON.parse(readFileSync(path, 'utf8')) as { private_key: string };
  return keyPairFromPrivate(private_key);
}

/** Run one wallet command; returns the process exit code. Exported for tests. */
export async function runWallet(argv: string[], env: NodeJS.ProcessEnv, out: Out): Promise<number> {
  const { values, positionals } = parseArgs({
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
      amount: { type: 'string' },
      fee: { type: 'string' },
      'no-wait': { type: 'boolean' },
      timeout: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  const [cmd, arg] = positionals;
  if (!cmd || values.help) {
    out(USAGE);
    return cmd ? 0 : 2;
  }
  const keyFile = values['key-file'] ?? env.NATIVE_WALLET_KEY ?? join(homedir(), '.native-wallet', 'key.json');
  const client = new NodeClient(values.url ?? env.NATIVE_URL ?? 'http://127.0.0.1:8545', values['api-key'] ?? env.NATIVE_API_KEY);
  const addressArg = (): string => {
    const a = arg ?? loadKey(keyFile).address;
    if (!isAddress(a)) throw new Error('address must be 0x + 40 hex');
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
      else throw new Error('import needs --private-key or --mnemonic');
      saveKey(keyFile, key);
      out(`address: ${key.address}\nsaved to ${keyFile}`);
      return 0;
    }
    case 'address':
      out(loadKey(keyFile).address);
      return 0;
    case 'balance': {
      const r = await client.get<{ balance: bigint }>(`/accounts/${addressArg()}/balance`);
      out(String(r.body?.balance));
      return r.status === 200 ? 0 : 1;
    }
    case 'nonce': {
      const r = await client.get<{ nonce: bigint }>(`/accounts/${addressArg()}/nonce`);
      out(String(r.body?.nonce));
      return r.status === 200 ? 0 : 1;
    }
    case 'tx': {
      if (!isHash(arg)) throw new Error('tx needs a 64-hex txid');
      const r = await client.get(`/transactions/${arg}`);
      out(r.status === 200 ? stringifyExact(r.body) : 'not found');
      return r.status === 200 ? 0 : 1;
    }
    case 'send':
      return send(client, loadKey(keyFile), values, out);
    case 'proof':
      return proof(client, addressArg(), out);
    default:
      out(`unknown command ${cmd}\n\n${USAGE}`);
      return 2;
  }
}

async function send(
  client: NodeClient,
  key: KeyPair,
  values: { to?: string; amount?: string; fee?: string; 'no-wait'?: boolean; timeout?: string },
  out: Out,
): Promise<number> {
  if (!isAddress(values.to)) throw new Error('--to must be 0x + 40 hex');
  if (!values.amount || !/^\d+$/.test(values.amount)) throw new Error('--amount must be an integer number of base units');
  if (values.fee !== undefined && !/^\d+$/.test(values.fee)) throw new Error('--fee must be an integer number of base units');
  const status = await client.get<{ chain_id: number }>('/native_status');
  const pending = await client.get<{ transactions: { from_address: string }[] }>('/mempool');
  const nonceRes = await client.get<{ nonce: bigint }>(`/accounts/${key.address}/nonce`);
  if (!status.body || !nonceRes.body) throw new Error('node unreachable or not answering');
  // Next nonce = committed nonce + this sender's transactions still in the mempool.
  const inPool = (pending.body?.transactions ?? []).filter((t) => t.from_address === key.address).length;
  const tx = signTransaction(
    {
      from: key.address,
      to: values.to,
      amount: BigInt(values.amount),
      fee: values.fee ? BigInt(values.fee) : MIN_TX_FEE_BASE,
      nonce: BigInt(nonceRes.body.nonce) + BigInt(inPool),
      chain_id: status.body.chain_id,
    },
    key,
  );
  const res = await client.post<{ success: boolean; error?: string }>('/transactions', { transaction: tx });
  if (res.status !== 200) {
    out(`rejected (${res.status}): ${res.body?.error ?? ''}`);
    return 1;
  }
  out(`txid: ${tx.txid}`);
  if (values['no-wait']) return 0;
  const deadline = Date.now() + Number(values.timeout ?? 30) * 1000;
  while (Date.now() < deadline) {
    const r = await client.get<{ status: string; block_index: number }>(`/transactions/${tx.txid}`);
    if (r.body?.status === 'confirmed') {
      out(`included in block ${r.body.block_index}`);
      return 0;
    }
    await new Promise((ok) => setTimeout(ok, 200));
  }
  out('not included before the timeout');
  return 1;
}

async function proof(client: NodeClient, address: string, out: Out): Promise<number> {
  const r = await client.get<{ height: number; proof: StateProof | null; account: { balance: bigint; nonce: bigint } | null }>(
    `/address/${address}/proof`,
  );
  if (!r.body) throw new Error('no proof returned');
  if (!r.body.proof) {
    out(`account ${address} does not exist at height ${r.body.height}`);
    return 1;
  }
  // Trust only the block header's state root, fetched separately, and the proof's own bytes.
  const block = await client.get<{ state_root: string }>(`/chain/blocks/${r.body.height}`);
  if (!block.body) throw new Error('block not found');
  const keyOk = r.body.proof.key === accountKeyBytes(address).toString('hex');
  const ok = keyOk && verifyStateProof(r.body.proof, block.body.state_root, sha256);
  const acc = decodeAccount(Buffer.from(r.body.proof.value, 'hex'));
  out(`height ${r.body.height} state_root ${block.body.state_root}`);
  out(`balance_wei ${acc.balance} nonce ${acc.nonce}`);
  out(ok ? 'proof: VALID' : 'proof: INVALID');
  return ok ? 0 : 1;
}

const isMain = process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url);
if (isMain) {
  runWallet(process.argv.slice(2), process.env, (l) => process.stdout.write(`${l}\n`)).then(
    (code) => process.exit(code),
    (err) => {
      process.stderr.write(`error: ${(err as Error).message}\n`);
      process.exit(1);
    },
  );
}
