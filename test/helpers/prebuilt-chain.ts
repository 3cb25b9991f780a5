/**
 * A generated network's first blocks, made in the test process with the validators' own keys (the
 * proposer signs each block, three of four validators precommit it), then copied into every validator's
 * data dir: the nodes start at that height and a late full node has hundreds of real blocks to sync and
 * verify, without the test waiting minutes for a live network to make them. The blocks go through the
 * node's own Chain (the one block-validity rule), so they are exactly what validators would have made.
 */
import { cpSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ethers } from 'ethers';
import { Chain, readGenesisFile, proposerAt } from '../../ts/chain/index.js';
import { chainCommon, decodeSignedEvmTransaction, storedEvmTransaction } from '../../ts/execution/index.js';
import {
  type KeyPair,
  keyPairFromPrivate,
  privateKeyHex,
  type SignedTransaction,
  signTransaction,
} from '../../ts/ledger/index.js';
import type { TestnetNode } from '../../ts/node/index.js';
import { openRocksStore } from '../../ts/storage/index.js';
import { fromHex } from '../../ts/util/index.js';
import { compiled } from './contracts.js';
import { devKey } from './evm.js';
import { certificate } from './bft-blocks.js';

export interface Prebuilt {
  height: number;
  /** The ERC-20 deployed by dev account 2 (its constructor and a transfer emit Transfer logs). */
  token: string;
  /** Native transfers from dev account 0 to dev account 1. */
  transfers: number;
}

export const validatorKeyOf = (node: TestnetNode): KeyPair =>
  keyPairFromPrivate(readFileSync(join(node.data_dir, 'validator.key'), 'utf8').trim());

async function evmTx(key: KeyPair, nonce: number, to: string | null, data: string, chainId: number): Promise<SignedTransaction> {
  const raw = await new ethers.Wallet(`0x${privateKeyHex(key)}`).signTransaction({
    type: 2,
    chainId,
    nonce,
    to,
    data,
    gasLimit: 2_000_000n,
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1n,
  });
  const bytes = fromHex(raw);
  return storedEvmTransaction(
    decodeSignedEvmTransaction(bytes, chainCommon(chainId, 'prague')),
    bytes,
    Math.floor(Date.now() / 1000),
  );
}

export interface PrebuildOptions {
  /** Fresh accounts funded with 1 coin each by dev accounts 3-9, 1,000 per block from height 2 on. */
  fund?: KeyPair[];
  /** Blocks after the funding that each carry one transfer from every one of these (funded) senders. */
  load?: { senders: KeyPair[]; blocks: number };
}

const FUNDING_PER_BLOCK = 1000;

/** Make `count` blocks on node 0's data dir, then copy its database to the other validators. */
export async function prebuildChain(nodes: TestnetNode[], count: number, opts: PrebuildOptions = {}): Promise<Prebuilt> {
  const validators = nodes.filter((n) => n.role === 'validator');
  const keys = validators.map(validatorKeyOf);
  const keyOf = (address: string) => keys.find((k) => k.address === address) as KeyPair;
  const params = readGenesisFile(join(dirname(validators[0].data_dir), 'genesis.json'));
  const db = await openRocksStore(join(validators[0].data_dir, 'db'));
  const chain = new Chain(params, db, 1024);
  await chain.open();
  const [alice, bob, deployer] = [devKey(0), devKey(1), devKey(2)];
  const token = ethers.getCreateAddress({ from: deployer.address, nonce: 0 }).toLowerCase();
  const tokenIface = new ethers.Interface(compiled('Token').abi);
  const deployData = `${compiled('Token').bytecode}${tokenIface.encodeDeploy(['Devnet', 'DVN', 10n ** 24n]).slice(2)}`;
  let transfers = 0;
  const funders = [3, 4, 5, 6, 7, 8, 9].map(devKey);
  const nonces = new Map<string, bigint>();
  const send = (from: KeyPair, to: string, amount: bigint): SignedTransaction => {
    const nonce = nonces.get(from.address) ?? 0n;
    nonces.set(from.address, nonce + 1n);
    return signTransaction({ from: from.address, to, amount, fee: 10_000n, nonce, chain_id: params.chainId }, from);
  };
  const toFund = [...(opts.fund ?? [])];
  const fundingBlocks = Math.ceil(toFund.length / FUNDING_PER_BLOCK);
  const loadFrom = 2 + fundingBlocks;
  try {
    for (let h = chain.height + 1; h <= count; h++) {
      const txs: SignedTransaction[] = [];
      if (h >= 2 && toFund.length > 0) {
        toFund
          .splice(0, FUNDING_PER_BLOCK)
          .forEach((k, i) => txs.push(send(funders[i % funders.length], k.address, 100_000_000n)));
      }
      if (opts.load && h >= loadFrom && h < loadFrom + opts.load.blocks) {
        for (const k of opts.load.senders) txs.push(send(k, bob.address, 1n));
      }
      if (h % 7 === 0) {
        txs.push(
          signTransaction(
            {
              from: alice.address,
              to: bob.address,
              amount: 1_000n + BigInt(h),
              fee: 10_000n,
              nonce: BigInt(transfers),
              chain_id: params.chainId,
            },
            alice,
          ),
        );
        transfers++;
      }
      if (h === 20) txs.push(await evmTx(deployer, 0, null, deployData, params.chainId));
      if (h === 21)
        txs.push(await evmTx(deployer, 1, token, tokenIface.encodeFunctionData('transfer', [bob.address, 5n]), params.chainId));
      const proposer = keyOf(proposerAt(params, chain.state, h, 0)?.address as string);
      if (chain.consensusAt(h) !== 'DPoS+BFT') {
        await chain.commit(await chain.propose(txs, proposer, chain.now()));
        continue;
      }
      const head = chain.head;
      const lastCommit = head.consensus === 'DPoS+BFT' ? head.justification : new Uint8Array(0);
      const exec = await chain.execute(txs, proposer.address, chain.now(), undefined, { last_commit: lastCommit, evidence: [] });
      const sealed = chain.seal(exec, proposer, 0, { proposal: true });
      chain.abandon(sealed);
      const b = sealed.block;
      if (b.tx_count !== txs.length) throw new Error(`block ${h} dropped a transaction`);
      // Three of the four precommit, a different one left out each height (as a slow validator would be).
      const justification = certificate(
        params,
        b,
        keys.filter((_, i) => i !== h % keys.length),
      );
      await chain.importBlock({ ...b, justification });
    }
  } finally {
    await db.close();
  }
  for (const v of validators.slice(1)) cpSync(join(validators[0].data_dir, 'db'), join(v.data_dir, 'db'), { recursive: true });
  return { height: count, token, transfers };
}
