/**
 * The native side of the explorer fixture: a dev genesis whose validator (the node's own key) is bonded, so
 * the chain runs DPoS with real stake, commission, uptime and rewards from the first block; a delegation and
 * a commission change; SRC-20 tokens (one named and symbolled as XSS probes, deployed as a native Deploy
 * operation) with transfers, a mint and a burn; SRC-721 collections (one named as an XSS probe, with base_uri
 * `javascript:alert(1)` and token URI overrides carrying markup and a `javascript:` URI) with mints, a
 * transfer, an approval and a burn.
 */
import { join } from 'node:path';
import { writeGenesisFile, DEV_ACCOUNT_BALANCE_BASE, PRESET_ACTIVATION } from '../../ts/chain/index.js';
import { tokenContractAddress, collectionAddress } from '../../ts/modules/index.js';
import { type KeyPair, randomKeyPair, signTransaction, BASE_PER_COIN, ZERO_ADDRESS } from '../../ts/ledger/index.js';
import { saveValidatorKey } from '../../ts/node/index.js';
import { toHex } from '../../ts/util/index.js';
import { CHAIN_ID, devKey } from '../helpers/evm.js';
import { type TestNode, httpJson, startTestNode } from '../helpers/node.js';
import { tempDir, waitFor } from '../helpers/util.js';

/** A token name and symbol that would run script or break out of an attribute if a page did not escape them. */
export const SRC20_XSS_NAME = '<script>alert("src20")</script>';
/** 16 characters: the longest SRC-20 symbol. */
export const SRC20_XSS_SYMBOL = '"><svg onload=1>';
/** Blocks per epoch: epochs (and their rewards) pass within seconds at the test node's 200 ms blocks. */
export const EPOCH_LENGTH = 10;
export const VALIDATOR_STAKE = 20_000n * BASE_PER_COIN;
export const DELEGATION = 1_000n * BASE_PER_COIN;

const stringify = (body: unknown): string => JSON.stringify(body, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));

/** Signs and submits native operations and transfers with each sender's next nonce (tracked here). */
export class Sender {
  private readonly nonces = new Map<string, bigint>();
  constructor(private readonly url: string) {}

  nextNonce(key: KeyPair): bigint {
    const n = this.nonces.get(key.address) ?? 0n;
    this.nonces.set(key.address, n + 1n);
    return n;
  }

  /** A native operation (to the zero address, amount 0); returns its txid. */
  op(key: KeyPair, body: unknown, fee = 10_000n): Promise<string> {
    return this.opAt(key, this.nextNonce(key), body, fee);
  }

  /** A native operation with a nonce taken earlier (nextNonce), submitted to `path`. */
  async opAt(key: KeyPair, nonce: bigint, body: unknown, fee = 10_000n, path = '/transactions'): Promise<string> {
    const tx = signTransaction(
      { from: key.address, to: ZERO_ADDRESS, amount: 0n, fee, nonce, data: stringify(body), chain_id: CHAIN_ID },
      key,
    );
    return this.submit(tx, path);
  }

  /** A native coin transfer; returns its txid. */
  async transfer(key: KeyPair, to: string, amount: bigint): Promise<string> {
    const tx = signTransaction(
      { from: key.address, to, amount, fee: 10_000n, nonce: this.nextNonce(key), chain_id: CHAIN_ID },
      key,
    );
    return this.submit(tx);
  }

  private async submit(tx: ReturnType<typeof signTransaction>, path = '/transactions'): Promise<string> {
    const r = await httpJson(`${this.url}${path}`, { method: 'POST', json: { transaction: tx } });
    if (r.status !== 200) throw new Error(`POST ${path}: ${r.status} ${r.text}`);
    return tx.txid;
  }
}

/** Wait until a transaction is in a block. */
export async function confirmed(url: string, txid: string): Promise<{ block_index: number }> {
  return waitFor(
    async () => {
      const r = await httpJson(`${url}/transactions/${txid}`);
      return r.status === 200 && r.body.status === 'confirmed' ? r.body : null;
    },
    30_000,
    `inclusion of ${txid}`,
  );
}

/** A dev node whose genesis bonds its validator (DPoS from block 1, short epochs). */
export async function startStakedNode(): Promise<{ n: TestNode; validatorKey: KeyPair; stop: () => Promise<void> }> {
  const tmp = tempDir();
  const validatorKey = randomKeyPair();
  saveValidatorKey(tmp.dir, validatorKey);
  const alloc = new Map<string, bigint>();
  for (let i = 0; i < 10; i++) alloc.set(devKey(i).address, DEV_ACCOUNT_BALANCE_BASE);
  alloc.set(validatorKey.address, 100n * BASE_PER_COIN);
  const genesisFile = join(tmp.dir, 'genesis.json');
  writeGenesisFile(genesisFile, {
    network: 'dev',
    chainId: CHAIN_ID,
    genesisTimestamp: Math.floor(Date.now() / 1000),
    activation: PRESET_ACTIVATION.dev,
    validators: [
      {
        address: validatorKey.address,
        public_key: toHex(validatorKey.publicKey),
        name: 'explorer-validator',
        stake: VALIDATOR_STAKE,
      },
    ],
    alloc,
    evmHardfork: 'prague',
    epochLength: EPOCH_LENGTH,
  });
  let n: TestNode;
  try {
    n = await startTestNode({ dataDir: tmp.dir, genesisFile });
  } catch (err) {
    tmp.cleanup();
    throw err;
  }
  return {
    n,
    validatorKey,
    stop: async () => {
      await n.stop();
      tmp.cleanup();
    },
  };
}

export interface NativeEntities {
  /** SRC-20 tokens: an ordinary one and the XSS probe. */
  gold: string;
  hostile: string;
  goldDeployTxid: string;
  goldTransferTxid: string;
  hostileDeployTxid: string;
  delegateTxid: string;
  /** Holders of gold: the deployer and three recipients. */
  goldHolders: string[];
}

/** Tokens, transfers, a delegation and a commission change (each confirmed). */
export async function fillNative(url: string, s: Sender, validatorKey: KeyPair): Promise<NativeEntities> {
  const deployer = devKey(0);
  const goldNonce = s.nextNonce(deployer);
  // The first nonce is reserved for gold's deploy: its contract address derives from (deployer, nonce).
  const gold = tokenContractAddress(deployer.address, goldNonce);
  const goldDeployTxid = await s.opAt(
    deployer,
    goldNonce,
    { Deploy: { name: 'Gold', symbol: 'GLD', decimals: 2, supply: 1_000_000n, max_supply: 2_000_000n } },
    100_000n,
    '/tokens/deploy',
  );
  await confirmed(url, goldDeployTxid);
  const goldHolders = [deployer.address, devKey(1).address, devKey(2).address, devKey(5).address];
  const goldTransferTxid = await s.op(deployer, { Transfer: { contract: gold, to: devKey(1).address, amount: 250_000n } });
  await s.op(deployer, { Transfer: { contract: gold, to: devKey(2).address, amount: 100_000n } });
  await s.op(deployer, { Mint: { contract: gold, to: devKey(5).address, amount: 50_000n } });
  await confirmed(url, goldTransferTxid);
  const burn = await s.op(devKey(1), { Burn: { contract: gold, amount: 5_000n } });

  const hostileNonce = s.nextNonce(devKey(3));
  const hostile = tokenContractAddress(devKey(3).address, hostileNonce);
  const hostileDeployTxid = await s.opAt(
    devKey(3),
    hostileNonce,
    { Deploy: { name: SRC20_XSS_NAME, symbol: SRC20_XSS_SYMBOL, decimals: 18, supply: 10n ** 24n, max_supply: 0n } },
    100_000n,
  );
  await confirmed(url, hostileDeployTxid);
  const hostileTransfer = await s.op(devKey(3), { Transfer: { contract: hostile, to: devKey(5).address, amount: 10n ** 21n } });

  const delegateTxid = await s.op(devKey(6), { Delegate: { validator: validatorKey.address, amount: DELEGATION } });
  const commission = await s.op(validatorKey, { UpdateCommission: { commission_bps: 100n } });
  for (const txid of [burn, hostileTransfer, delegateTxid, commission]) await confirmed(url, txid);
  // Every operation took effect (admission dry-runs them; this checks the fixture itself).
  const goldNow = (await httpJson(`${url}/tokens/${gold}`)).body;
  if (Number(goldNow.holders) !== 4 || BigInt(goldNow.supply) !== 1_045_000n) throw new Error(`gold: ${JSON.stringify(goldNow)}`);
  const delegations = (await httpJson(`${url}/validators/${validatorKey.address}/delegators`)).body;
  if (Number(delegations.total) !== 2) throw new Error(`delegators: ${JSON.stringify(delegations)}`);
  return {
    gold,
    hostile,
    goldDeployTxid,
    goldTransferTxid,
    hostileDeployTxid,
    delegateTxid,
    goldHolders,
  };
}

/** An NFT collection name that is markup; its base URI and overrides are script URIs and markup. */
export const NFT_XSS_NAME = '<img src=x onerror=alert("nft")>';
export const NFT_XSS_BASE_URI = 'javascript:alert(1)';
export const NFT_XSS_OVERRIDE = "\"><script>alert('uri')</script>";
export const NFT_JS_OVERRIDE = 'javascript:alert(3)';

export interface NftEntities {
  /** The hostile collection: tokens 1 (moved to devKey(9)), 2 (markup override, approved), 3 (burned), 4 (auto id). */
  hostile: string;
  /** An ordinary collection (search by symbol). */
  art: string;
  deployTxid: string;
  mintTxid: string;
  transferTxid: string;
  /** Owner of tokens 2 and 4 (and formerly 1). */
  owner: string;
}

/** NFT collections, mints, a transfer, an approval and a burn (each confirmed). */
export async function fillNft(url: string, s: Sender): Promise<NftEntities> {
  const deployer = devKey(7);
  const owner = devKey(8);
  const other = devKey(9);
  const deployNonce = s.nextNonce(deployer);
  const hostile = collectionAddress(deployer.address, deployNonce);
  const deployTxid = await s.opAt(
    deployer,
    deployNonce,
    {
      DeployNft: {
        name: NFT_XSS_NAME,
        symbol: 'PROBE',
        max_supply: 100n,
        royalty_bps: 250n,
        royalty_recipient: deployer.address,
        base_uri: NFT_XSS_BASE_URI,
      },
    },
    100_000n,
  );
  const artNonce = s.nextNonce(deployer);
  const art = collectionAddress(deployer.address, artNonce);
  await s.opAt(
    deployer,
    artNonce,
    {
      DeployNft: {
        name: 'Art',
        symbol: 'ART',
        max_supply: 0n,
        royalty_bps: 0n,
        royalty_recipient: deployer.address,
        base_uri: 'ipfs://bafy/',
      },
    },
    100_000n,
  );
  await confirmed(url, deployTxid);
  const mintTxid = await s.op(deployer, { MintNft: { collection: hostile, to: owner.address, token_id: 1n } });
  await s.op(deployer, {
    MintNft: { collection: hostile, to: owner.address, token_id: 2n, token_uri_override: NFT_XSS_OVERRIDE },
  });
  await s.op(deployer, {
    MintNft: { collection: hostile, to: other.address, token_id: 3n, token_uri_override: NFT_JS_OVERRIDE },
  });
  await s.op(deployer, { MintNft: { collection: hostile, to: owner.address } });
  const artMint = await s.op(deployer, { MintNft: { collection: art, to: other.address, token_id: 7n } });
  await confirmed(url, artMint);
  const transferTxid = await s.op(owner, { TransferNft: { collection: hostile, token_id: 1n, to: other.address } });
  const approve = await s.op(
    owner,
    { ApproveNft: { collection: hostile, token_id: 2n, spender: deployer.address, expiry_height: 0n } },
    5_000n,
  );
  const burn = await s.op(other, { BurnNft: { collection: hostile, token_id: 3n } });
  for (const txid of [mintTxid, transferTxid, approve, burn]) await confirmed(url, txid);
  const c = (await httpJson(`${url}/nft/collection/${hostile}`)).body;
  if (Number(c.total_supply) !== 3 || Number(c.total_burned) !== 1) throw new Error(`collection: ${JSON.stringify(c)}`);
  return { hostile, art, deployTxid, mintTxid, transferTxid, owner: owner.address };
}

/** Wait until `epochs` more epochs ended after the delegation (rewards distributed to delegators). */
export async function waitEpochs(url: string, epochs: number): Promise<void> {
  const start = (await httpJson(`${url}/epoch/current`)).body.epoch_number as number;
  await waitFor(
    async () => ((await httpJson(`${url}/epoch/current`)).body.epoch_number as number) >= start + epochs,
    60_000,
    `${epochs} epochs`,
  );
}
