import type { Block } from '../chain/index.js';
import { type ReceiptRecord, chainCommon, isEvmTransaction, logsBloom, typedTransactionOf } from '../execution/index.js';
import { crypto } from '../crypto/index.js';
import { type SignedTransaction, NATIVE_TX_GAS, baseToWei } from '../ledger/index.js';
import { fromHex, qty, to0x } from '../util/index.js';

/** Ethereum-facing constants (docs/economics.md). */
export const GAS_PRICE_WEI = 1_000_000_000n;
/** Flat base fee per gas reported to Ethereum tooling (dynamic base fee is not live). */
export const INITIAL_BASE_FEE_WEI = 1_000_000_000n;
export const BLOCK_GAS_LIMIT = 30_000_000n;
export const BLOCK_GAS_TARGET = 15_000_000n;

const ZERO32 = `0x${'00'.repeat(32)}`;
/** keccak256(rlp([])): the uncles hash and empty-trie root Ethereum tools expect. */
const EMPTY_UNCLES = '0x1dcc4de8dec75d7aab85b567b6ccd41ad312451b948a7413f0a142fd40d49347';
const EMPTY_TRIE = '0x56e81f171bcc55a6ff8345e692c0f86e5b48e01b996cadc001622fb5e363b421';

/**
 * Recovery id of a native transaction's compact signature (its public key is known), so Ethereum
 * clients get a well-formed v. Native signatures carry no recovery bit; we find it by trial.
 */
function recoveryId(tx: SignedTransaction): number {
  if (tx.public_key.length !== 130) return 0;
  const sig = fromHex(tx.signature);
  const digest = fromHex(tx.txid);
  const pub = fromHex(tx.public_key);
  for (const recid of [0, 1]) {
    const got = crypto().recover(sig, recid, digest);
    if (got && Buffer.from(got).equals(pub)) return recid;
  }
  return 0;
}

export interface TxPosition {
  blockHash: string | null;
  blockNumber: number | null;
  index: number | null;
}

/** An EVM transaction's JSON-RPC shape, from its raw signed form. */
function ethEvmTransaction(tx: SignedTransaction, pos: TxPosition, chainId: number, hardfork: string): Record<string, unknown> {
  const t = typedTransactionOf(tx, chainCommon(chainId, hardfork));
  const j = t.toJSON() as Record<string, unknown>;
  const out: Record<string, unknown> = {
    hash: `0x${tx.txid}`,
    type: qty(t.type),
    nonce: qty(t.nonce),
    blockHash: pos.blockHash ? `0x${pos.blockHash}` : null,
    blockNumber: pos.blockNumber === null ? null : qty(pos.blockNumber),
    transactionIndex: pos.index === null ? null : qty(pos.index),
    from: tx.from_address,
    to: t.to ? t.to.toString() : null,
    value: qty(t.value),
    gas: qty(t.gasLimit),
    input: j.data ?? '0x',
    chainId: qty(chainId),
    v: qty(t.v ?? 0n),
    r: qty(t.r ?? 0n),
    s: qty(t.s ?? 0n),
  };
  if ('maxFeePerGas' in t) {
    out.maxFeePerGas = qty(t.maxFeePerGas);
    out.maxPriorityFeePerGas = qty(t.maxPriorityFeePerGas);
    // Mined: the price actually paid (flat base fee + capped tip); pending: the cap.
    const tip =
      t.maxFeePerGas - INITIAL_BASE_FEE_WEI < t.maxPriorityFeePerGas
        ? t.maxFeePerGas - INITIAL_BASE_FEE_WEI
        : t.maxPriorityFeePerGas;
    out.gasPrice = qty(pos.blockNumber === null ? t.maxFeePerGas : INITIAL_BASE_FEE_WEI + tip);
  } else out.gasPrice = qty((t as { gasPrice: bigint }).gasPrice);
  if (t.type !== 0) {
    out.accessList = j.accessList ?? [];
    out.yParity = qty(t.v ?? 0n);
  }
  return out;
}

/** A transaction in the Ethereum JSON-RPC shape: EVM ones from their raw form, native ones as legacy EIP-155. */
export function ethTransaction(
  tx: SignedTransaction,
  pos: TxPosition,
  chainId: number,
  hardfork = 'prague',
): Record<string, unknown> {
  if (isEvmTransaction(tx)) return ethEvmTransaction(tx, pos, chainId, hardfork);
  const sigHex = tx.signature.length === 128 ? tx.signature : '00'.repeat(64);
  return {
    hash: `0x${tx.txid}`,
    nonce: qty(tx.nonce),
    blockHash: pos.blockHash ? `0x${pos.blockHash}` : null,
    blockNumber: pos.blockNumber === null ? null : qty(pos.blockNumber),
    transactionIndex: pos.index === null ? null : qty(pos.index),
    from: tx.from_address,
    to: tx.to_address,
    value: qty(baseToWei(tx.amount)),
    gas: qty(NATIVE_TX_GAS),
    gasPrice: qty(GAS_PRICE_WEI),
    input: '0x',
    type: '0x0',
    chainId: qty(chainId),
    v: qty(BigInt(chainId) * 2n + 35n + BigInt(recoveryId(tx))),
    r: `0x${sigHex.slice(0, 64)}`,
    s: `0x${sigHex.slice(64)}`,
  };
}

/** A block in the Ethereum JSON-RPC shape with every field ethers and viem read. */
export function ethBlock(
  b: Block,
  fullTx: boolean,
  chainId: number,
  hardfork = 'prague',
  gasLimit = BLOCK_GAS_LIMIT,
): Record<string, unknown> {
  return {
    number: qty(b.index),
    hash: `0x${b.hash}`,
    parentHash: `0x${b.previous_hash}`,
    nonce: '0x0000000000000000',
    mixHash: ZERO32,
    sha3Uncles: EMPTY_UNCLES,
    logsBloom: `0x${b.logs_bloom}`,
    transactionsRoot: b.tx_count === 0 ? EMPTY_TRIE : `0x${b.merkle_root}`,
    stateRoot: `0x${b.state_root}`,
    receiptsRoot: EMPTY_TRIE,
    miner: b.validator,
    difficulty: '0x0',
    totalDifficulty: '0x0',
    extraData: '0x',
    size: qty(500 + 300 * b.tx_count),
    gasLimit: qty(gasLimit),
    gasUsed: qty(b.gas_used),
    timestamp: qty(b.timestamp),
    baseFeePerGas: qty(INITIAL_BASE_FEE_WEI),
    withdrawals: [],
    withdrawalsRoot: EMPTY_TRIE,
    uncles: [],
    transactions: fullTx
      ? b.transactions.map((tx, i) =>
          ethTransaction(tx, { blockHash: b.hash, blockNumber: b.index, index: i }, chainId, hardfork),
        )
      : b.transactions.map((tx) => `0x${tx.txid}`),
  };
}

/** One log in the eth_getLogs / receipt shape. */
export function ethLog(
  log: ReceiptRecord['logs'][number],
  at: { blockHash: string; blockNumber: number; txHash: string; txIndex: number; logIndex: number },
): Record<string, unknown> {
  return {
    removed: false,
    logIndex: qty(at.logIndex),
    transactionIndex: qty(at.txIndex),
    transactionHash: `0x${at.txHash}`,
    blockHash: `0x${at.blockHash}`,
    blockNumber: qty(at.blockNumber),
    address: to0x(log.address),
    data: to0x(log.data),
    topics: log.topics.map(to0x),
  };
}

/** A receipt in the eth_getTransactionReceipt shape (native transfers too: status 1, flat gas, no logs). */
export function ethReceipt(
  b: Block,
  index: number,
  r: ReceiptRecord,
  firstLogIndex: number,
  chainId: number,
  hardfork = 'prague',
): Record<string, unknown> {
  const tx = b.transactions[index];
  const evm = isEvmTransaction(tx);
  const typed = evm ? typedTransactionOf(tx, chainCommon(chainId, hardfork)) : null;
  return {
    transactionHash: `0x${tx.txid}`,
    transactionIndex: qty(index),
    blockNumber: qty(b.index),
    blockHash: `0x${b.hash}`,
    from: tx.from_address,
    to: typed ? (typed.to ? typed.to.toString() : null) : tx.to_address,
    contractAddress: r.contractAddress ? to0x(r.contractAddress) : null,
    status: qty(r.status),
    gasUsed: qty(r.gasUsed),
    cumulativeGasUsed: qty(r.cumulativeGasUsed),
    effectiveGasPrice: qty(evm ? r.effectiveGasPrice : GAS_PRICE_WEI),
    type: qty(r.type),
    logs: r.logs.map((l, i) =>
      ethLog(l, { blockHash: b.hash, blockNumber: b.index, txHash: tx.txid, txIndex: index, logIndex: firstLogIndex + i }),
    ),
    logsBloom: to0x(logsBloom(r.logs)),
  };
}
