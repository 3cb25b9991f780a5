/**
 * The native side of the explorer fixture: a dev genesis whose validator (the node's own key) is bonded, so
 * the chain runs DPoS with real stake, commission, uptime and rewards from the first block; a delegation and
 * a commission change; SRC-20 tokens (one named and symbolled as XSS probes, deployed as a native Deploy
 * operation) with transfers, a mint and a burn.
 */
import { join } from 'node:path';
import { writeGenesisFile } from '../../ts/chain/genesis.js';
import { DEV_ACCOUNT_BALANCE_BASE, PRESET_ACTIVATION } from '../../ts/chain/params.js';
import { type KeyPair, randomKeyPair } from '../../ts/ledger/keys.js';
import { tokenContractAddress } from '../../ts/ledger/tokens/index.js';
import { signTransaction } from '../../ts/ledger/transaction.js';
import { BASE_PER_COIN, ZERO_ADDRESS } from '../../ts/ledger/units.js';
import { saveValidatorKey } from '../../ts/node/validator-key.js';
import { toHex } from '../../ts/util/hex.js';
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
  async op(key: KeyPair, body: unknown, fee = 10_000n): Promise<string> {
    const tx = signTransaction(
      {
        from: key.address,
        to: ZERO_ADDRESS,
        amount: 0n,
        fee,
        nonce: this.nextNonce(key),
        data: stringify(body),
        chain_id: CHAIN_ID,
      },
      key,
    );
    return this.submit(tx);
  }

  /** A native coin transfer; returns its txid. */
  async transfer(key: KeyPair, to: string, amount: bigint): Promise<string> {
    const tx = signTransaction(
      { from: key.address, to, amount, fee: 10_000n, nonce: this.nextNonce(key), chain_id: CHAIN_ID },
      key,
    );
    return this.submit(tx);
  }

  private async submit(tx: ReturnType<typeof signTransaction>): Promise<string> {
    const r = await httpJson(`${this.url}/transactions`, { method: 'POST', json: { transaction: tx } });
    if (r.status !== 200) throw new Error(`POST /transactions: ${r.status} ${r.text}`);
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
  const goldDeploy = signTransaction(
    {
      from: deployer.address,
      to: ZERO_ADDRESS,
      amount: 0n,
      fee: 100_000n,
      nonce: goldNonce,
      data: stringify({ Deploy: { name: 'Gold', symbol: 'GLD', decimals: 2, supply: 1_000_000n, max_supply: 2_000_000n } }),
      chain_id: CHAIN_ID,
    },
    deployer,
  );
  const r = await httpJson(`${url}/tokens/deploy`, { method: 'POST', json: { transaction: goldDeploy } });
  if (r.status !== 200) throw new Error(`deploy: ${r.status} ${r.text}`);
  await confirmed(url, goldDeploy.txid);
  const goldHolders = [deployer.address, devKey(1).address, devKey(2).address, devKey(5).address];
  const goldTransferTxid = await s.op(deployer, { Transfer: { contract: gold, to: devKey(1).address, amount: 250_000n } });
  await s.op(deployer, { Transfer: { contract: gold, to: devKey(2).address, amount: 100_000n } });
  await s.op(deployer, { Mint: { contract: gold, to: devKey(5).address, amount: 50_000n } });
  await confirmed(url, goldTransferTxid);
  const burn = await s.op(devKey(1), { Burn: { contract: gold, amount: 5_000n } });

  const hostileNonce = s.nextNonce(devKey(3));
  const hostile = tokenContractAddress(devKey(3).address, hostileNonce);
  const hostileDeploy = signTransaction(
    {
      from: devKey(3).address,
      to: ZERO_ADDRESS,
      amount: 0n,
      fee: 100_000n,
      nonce: hostileNonce,
      data: stringify({
        Deploy: { name: SRC20_XSS_NAME, symbol: SRC20_XSS_SYMBOL, decimals: 18, supply: 10n ** 24n, max_supply: 0n },
      }),
      chain_id: CHAIN_ID,
    },
    devKey(3),
  );
  const h = await httpJson(`${url}/transactions`, { method: 'POST', json: { transaction: hostileDeploy } });
  if (h.status !== 200) throw new Error(`hostile deploy: ${h.status} ${h.text}`);
  await confirmed(url, hostileDeploy.txid);
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
    goldDeployTxid: goldDeploy.txid,
    goldTransferTxid,
    hostileDeployTxid: hostileDeploy.txid,
    delegateTxid,
    goldHolders,
  };
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
