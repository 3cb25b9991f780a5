/**
 * Read queries the block explorer (ts/explorer) needs beyond the REST ones: pages of blocks from one range
 * read, what a transaction is and what it cost (kind, decoded operation, value in wei, fee and its split,
 * status from the receipt), a block's commit certificate, finality, recent activity per day, validators
 * seen producing, and the search box's resolution. Everything reads indexes, the in-memory window or the
 * head state: no page scans the chain.
 */
import { type Block, decodeJustification } from '../chain/index.js';
import {
  DEFAULT_TRACE_OPTIONS,
  chainCommon,
  isEvmTransaction,
  typedTransactionOf,
  type ReceiptRecord,
} from '../execution/index.js';
import {
  type NativeEvent,
  type NativeOperation,
  type SignedTransaction,
  txKind,
  baseToWei,
  NFT_COLLECTION_RE,
} from '../ledger/index.js';
import { EvmBusyError, NodeError, isAddress, isHash, normHash, to0x } from '../util/index.js';
import { DAY_SECONDS, STATS_DAYS, chainIndex } from '../indexes/index.js';
import {
  type NodeContext,
  type TxView,
  RECENT_TX_SCAN_BLOCKS,
  chainIdOf,
  collectionParam,
  confirmedTxView,
  ethChainFacts,
  getBlock,
  getToken,
  headBlock,
  headHeight,
  heightOfHash,
  isKnownTransaction,
  nextValidatorSet,
  perChainUntilRollback,
  readBlocks,
  receiptsAt,
  recentBlock,
  recentBlocks,
  txPoolStatus,
  isTokenContract,
  listTokens,
  nftCollection,
  nftCollections,
  normContract,
  revertReason,
  traceBlock,
} from '../services/index.js';

/** Height of the block with this hash (64 hex, 0x optional), or null. */
export async function blockHeightOfHash(ctx: NodeContext, hash: string): Promise<number | null> {
  return isHash(hash) ? heightOfHash(ctx, normHash(hash)) : null;
}

export interface ChainSummary {
  chainId: number;
  height: number;
  /** Consensus phase of the head block. */
  consensus: string;
  mempoolSize: number;
}

/** What every explorer page shows of the chain (the layout's footer, list totals). */
export const chainSummary = (ctx: NodeContext): ChainSummary => ({
  chainId: chainIdOf(ctx),
  height: headHeight(ctx),
  consensus: headBlock(ctx).consensus,
  mempoolSize: txPoolStatus(ctx).pending,
});

export interface FinalityView {
  head: number;
  finalized: number;
}

export const finalityView = (ctx: NodeContext): FinalityView => ({
  head: headHeight(ctx),
  finalized: ctx.consensus.finalizedHeight(),
});

export interface CommitCertificate {
  round: number;
  signers: string[];
}

/** The BFT commit certificate a block carries (null for PoA blocks; malformed bytes are reported as such). */
export function commitCertificate(b: Block): CommitCertificate | 'malformed' | null {
  if (b.justification.length === 0) return null;
  try {
    const j = decodeJustification(b.justification);
    return { round: j.round, signers: j.precommits.map((p) => p.validator) };
  } catch {
    return 'malformed';
  }
}

export type TxStatus = 'success' | 'failed' | 'pending';

export interface TxSummary {
  /** 'transfer', 'evm' or the operation family ('token', 'staking', 'nft'). */
  kind: string;
  /** The decoded native operation (null for transfers and EVM transactions, or data that does not decode). */
  op: NativeOperation | null;
  /** EVM: the recipient (null for a contract creation); native: to_address. */
  to: string | null;
  /** Value moved, in wei (native amounts are base units × 1e10). */
  valueWei: bigint;
  /** Fee paid in wei: the native fee, or gas used × effective price of an EVM transaction; null while pending (EVM). */
  feeWei: bigint | null;
  /** Spec fee split: floor(fee/2) to the proposer, the rest burned. */
  toProposerWei: bigint | null;
  burnedWei: bigint | null;
  status: TxStatus;
  /** EVM: gas used (receipt) and gas limit. */
  gasUsed: bigint | null;
  gasLimit: bigint | null;
  /** EVM calldata (0x-hex), '0x' for none. */
  input: string;
  /** Address of a contract this transaction created. */
  contractCreated: string | null;
  /** Why a failed transaction failed: the native operation's reason or the EVM revert reason. */
  failureReason: string | null;
  /** Events a native operation recorded in its receipt. */
  events: NativeEvent[];
  receipt: ReceiptRecord | null;
}

/** Summaries of transactions (confirmed or pending), reading each block's receipts once (one multi-get). */
export async function summarizeTransactions(ctx: NodeContext, views: readonly TxView[]): Promise<TxSummary[]> {
  const heights = [...new Set(views.flatMap((v) => (v.block_index === null ? [] : [v.block_index])))];
  const found = receiptsAt(ctx, heights);
  const receipts = new Map(heights.map((h, i) => [h, found[i]]));
  return views.map((v) =>
    summarize(ctx, v, v.block_index !== null && v.tx_index !== null ? (receipts.get(v.block_index)?.[v.tx_index] ?? null) : null),
  );
}

interface EvmFields {
  to: string | null;
  value: bigint;
  gasLimit: bigint;
  input: string;
}

/** Decoded EVM fields by txid (views are copies, so the decode cached on the stored object is not reached). */
const evmFields = new Map<string, EvmFields>();
const EVM_FIELDS_CACHE = 4096;

function evmFieldsOf(ctx: NodeContext, tx: SignedTransaction): EvmFields {
  const hit = evmFields.get(tx.txid);
  if (hit) return hit;
  const { chainId, evmHardfork } = ethChainFacts(ctx);
  const t = typedTransactionOf(tx, chainCommon(chainId, evmHardfork));
  const f = { to: t.to ? t.to.toString() : null, value: t.value, gasLimit: t.gasLimit, input: to0x(t.data) };
  evmFields.set(tx.txid, f);
  if (evmFields.size > EVM_FIELDS_CACHE) evmFields.delete(evmFields.keys().next().value as string);
  return f;
}

function summarize(ctx: NodeContext, tx: SignedTransaction & { status?: string }, r: ReceiptRecord | null): TxSummary {
  const pending = tx.status === 'pending_in_mempool';
  const status: TxStatus = pending ? 'pending' : r && r.status === 0 ? 'failed' : 'success';
  if (isEvmTransaction(tx)) {
    const t = evmFieldsOf(ctx, tx);
    const feeWei = r ? r.gasUsed * r.effectiveGasPrice : null;
    const toProposer = feeWei === null ? null : feeWei / 2n;
    return {
      kind: 'evm',
      op: null,
      to: t.to,
      valueWei: t.value,
      feeWei,
      toProposerWei: toProposer,
      burnedWei: feeWei === null || toProposer === null ? null : feeWei - toProposer,
      status,
      gasUsed: r?.gasUsed ?? null,
      gasLimit: t.gasLimit,
      input: t.input,
      contractCreated: r?.contractAddress ? to0x(r.contractAddress) : null,
      failureReason: r && r.status === 0 ? (revertReason(r.output) ?? 'execution reverted') : null,
      events: [],
      receipt: r,
    };
  }
  let kind = 'transfer';
  let op: NativeOperation | null = null;
  try {
    const k = txKind(tx);
    kind = k.kind;
    if ('op' in k) op = k.op;
  } catch {
    kind = 'unknown';
  }
  // Native fees split in base units (spec): floor(fee/2) to the proposer.
  const toProposerBase = tx.fee / 2n;
  return {
    kind,
    op,
    to: tx.to_address,
    valueWei: baseToWei(tx.amount),
    feeWei: baseToWei(tx.fee),
    toProposerWei: baseToWei(toProposerBase),
    burnedWei: baseToWei(tx.fee - toProposerBase),
    status,
    gasUsed: r?.gasUsed ?? null,
    gasLimit: null,
    input: '0x',
    contractCreated: null,
    failureReason: r && r.status === 0 ? Buffer.from(r.output).toString('utf8') || 'failed' : null,
    events: r?.events ?? [],
    receipt: r,
  };
}

export interface DayActivity {
  /** Unix seconds of 00:00 UTC. */
  dayStart: number;
  blocks: number;
  txs: number;
}

/** Blocks and transactions per UTC day over the last STATS_DAYS days (oldest first), from the chain index. */
export async function dailyActivity(ctx: NodeContext): Promise<{ days: DayActivity[]; complete: boolean }> {
  const idx = await chainIndex(ctx);
  const today = Math.floor(Date.now() / 1000 / DAY_SECONDS);
  const days: DayActivity[] = [];
  for (let d = today - STATS_DAYS + 1; d <= today; d++) {
    const agg = idx.days.get(d);
    days.push({ dayStart: d * DAY_SECONDS, blocks: agg?.blocks ?? 0, txs: agg?.txs ?? 0 });
  }
  return { days, complete: idx.coversSince((today - STATS_DAYS + 1) * DAY_SECONDS) };
}

/** Blocks looked at (newest first, from the in-memory window) to tell which validators are producing. */
export const ONLINE_WINDOW_BLOCKS = 100;

/**
 * Members of the active set (of the next height) that proposed one of the last ONLINE_WINDOW_BLOCKS blocks
 * (at least 2 rounds of the schedule).
 */
export function validatorsOnline(ctx: NodeContext): { online: number; active: number } {
  const members = new Set(nextValidatorSet(ctx).map((v) => v.address));
  const active = members.size;
  const seen = new Set<string>();
  let n = 0;
  for (const b of recentBlocks(ctx)) {
    if (b.index === 0 || n++ >= Math.max(ONLINE_WINDOW_BLOCKS, 2 * active)) break;
    if (members.has(b.validator)) seen.add(b.validator);
  }
  return { online: seen.size, active };
}

/**
 * Names of the head's validator set by address, for labelling proposers: read from the set itself, so a block
 * or list page never waits for the chain index (validatorSet() backfills it).
 */
export function validatorNames(ctx: NodeContext): Map<string, string> {
  const set = nextValidatorSet(ctx);
  return new Map(set.map((v) => [v.address, v.name]));
}

/** Latest blocks a validator proposed within the in-memory window, newest first. */
export function recentBlocksBy(ctx: NodeContext, validator: string, limit: number): Block[] {
  const out: Block[] = [];
  for (const b of recentBlocks(ctx)) {
    if (out.length >= limit) break;
    if (b.validator === validator) out.push(b);
  }
  return out;
}

export type SearchTarget =
  | { kind: 'block'; height: number }
  | { kind: 'tx'; txid: string }
  | { kind: 'address'; address: string }
  | { kind: 'token'; contract: string }
  | { kind: 'collection'; address: string };

/** Longest search text looked at. */
export const MAX_SEARCH_LENGTH = 200;
/** NFT collections whose names and symbols the search box compares (the oldest ones). */
export const MAX_SEARCHED_COLLECTIONS = 10_000;

/**
 * What a search box entry names: a height, a transaction id (chain or mempool), a block hash, an address,
 * a token (SRC20_ address, or its exact symbol or name) or an NFT collection (SRC721_ address, or its exact
 * symbol or name); null when nothing.
 */
export async function resolveSearch(ctx: NodeContext, query: string): Promise<SearchTarget | null> {
  const q = query.trim();
  if (q === '' || q.length > MAX_SEARCH_LENGTH) return null;
  if (/^\d{1,15}$/.test(q)) {
    const height = Number(q);
    return height <= headHeight(ctx) ? { kind: 'block', height } : null;
  }
  // isHash/isAddress are type guards on unknown; on a string they would narrow q to never below.
  const hash = (s: string): boolean => isHash(s);
  const address = (s: string): boolean => isAddress(s);
  if (hash(q)) {
    const id = normHash(q);
    if (await isKnownTransaction(ctx, id)) return { kind: 'tx', txid: id };
    const height = await heightOfHash(ctx, id);
    return height === null ? null : { kind: 'block', height };
  }
  if (address(q)) return { kind: 'address', address: q.toLowerCase() };
  if (isTokenContract(q)) {
    const contract = normContract(q);
    return getToken(ctx, contract) ? { kind: 'token', contract } : null;
  }
  if (NFT_COLLECTION_RE.test(q)) {
    const address = collectionParam(q);
    return (await nftCollection(ctx, address)) ? { kind: 'collection', address } : null;
  }
  const wanted = q.toLowerCase();
  const named = (x: { name: string; symbol: string }) => x.symbol.toLowerCase() === wanted || x.name.toLowerCase() === wanted;
  const token = (await listTokens(ctx)).tokens.find(named);
  if (token) return { kind: 'token', contract: token.contract };
  const collections = await nftCollections(ctx, 0, MAX_SEARCHED_COLLECTIONS);
  const collection = collections.collections.find(named);
  return collection ? { kind: 'collection', address: collection.address } : null;
}

/** Time limit of tracing one block for the explorer's call trees (a background job, one per block at a time). */
export const EXPLORER_BLOCK_TRACE_TIMEOUT_MS = 10_000;
/** How long a page waits for a call tree being traced before it renders without it (and reloads). */
export const EXPLORER_TRACE_WAIT_MS = 30;

/** One call of a callTracer tree (quantities hex, as debug_traceTransaction answers). */
export interface CallFrame {
  type: string;
  from: string;
  to?: string;
  value?: string;
  gas?: string;
  gasUsed?: string;
  input?: string;
  output?: string;
  error?: string;
  revertReason?: string;
  calls?: CallFrame[];
}

export type CallTreeAnswer = { tree: CallFrame } | { unavailable: string } | { pending: true };

/** Call trees (or why a block has none) kept per chain: a committed transaction's tree never changes. */
export const CALL_TREE_CACHE = 4096;

interface TraceCache {
  trees: Map<string, CallFrame>;
  /** Blocks whose trace failed, with the reason (bounded like the trees). */
  failed: Map<number, string>;
  jobs: Map<number, Promise<void>>;
}

const traceCaches = new WeakMap<object, TraceCache>();

function traceCacheOf(ctx: NodeContext): TraceCache {
  // A rollback (dev chain) removes blocks whose trees are cached, and a transaction of one may be mined
  // again in another block with another result: start afresh (jobs in flight fill the old cache only).
  return perChainUntilRollback(ctx, traceCaches, () => ({ trees: new Map(), failed: new Map(), jobs: new Map() }));
}

const remember = <K, V>(m: Map<K, V>, k: K, v: V): void => {
  m.delete(k);
  m.set(k, v);
  if (m.size > CALL_TREE_CACHE) m.delete(m.keys().next().value as K);
};

/**
 * Trace every transaction of the block at `height` with the callTracer in one pass (tracing one transaction
 * re-executes the ones before it in its block; one pass gives every tree for the cost of the block) and cache
 * the trees. Concurrent callers share the job.
 */
function traceBlockJob(ctx: NodeContext, c: TraceCache, height: number): Promise<void> {
  let job = c.jobs.get(height);
  if (!job) {
    job = (async () => {
      try {
        const block = await getBlock(ctx, height);
        const entries = await traceBlock(ctx, block, {
          ...DEFAULT_TRACE_OPTIONS,
          tracer: 'callTracer',
          timeoutMs: EXPLORER_BLOCK_TRACE_TIMEOUT_MS,
        });
        for (const e of entries) if (e.result) remember(c.trees, e.txHash.replace(/^0x/, ''), e.result as CallFrame);
      } catch (err) {
        if (!(err instanceof NodeError)) throw err;
        // A full trace pool is a moment's state: the next view of the page traces again.
        if (err instanceof EvmBusyError) return;
        remember(c.failed, height, err.message);
      } finally {
        c.jobs.delete(height);
      }
    })();
    c.jobs.set(height, job);
  }
  return job;
}

/**
 * The call tree of the EVM transaction `txid` of the block at `height`: from the cache, else from tracing its
 * block, waited for at most `waitMs` (then `pending`: the trace goes on and the next view finds it).
 */
export async function callTree(
  ctx: NodeContext,
  height: number,
  txid: string,
  waitMs = EXPLORER_TRACE_WAIT_MS,
): Promise<CallTreeAnswer> {
  const c = traceCacheOf(ctx);
  const answer = (): CallTreeAnswer | null => {
    const tree = c.trees.get(txid);
    if (tree) return { tree };
    const failed = c.failed.get(height);
    return failed === undefined ? null : { unavailable: failed };
  };
  const known = answer();
  if (known) return known;
  const job = traceBlockJob(ctx, c, height);
  if (!Number.isFinite(waitMs)) {
    await job;
    return answer() ?? { unavailable: 'the trace of its block has no call tree for this transaction' };
  }
  let timer: NodeJS.Timeout | undefined;
  const waited = await Promise.race([
    job.then(() => true),
    new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), waitMs);
    }),
  ]);
  clearTimeout(timer);
  if (!waited) return { pending: true };
  return answer() ?? { unavailable: 'the trace of its block has no call tree for this transaction' };
}

/** Blocks a transaction list walks back from the head at most (the REST list's bound). */
export const TX_LIST_SCAN_BLOCKS = RECENT_TX_SCAN_BLOCKS;
/** Blocks read from disk per step once the walk leaves the in-memory window. */
const TX_LIST_DISK_CHUNK = 250;

/**
 * A page of confirmed transactions, newest first (descending height, then position), like GET /transactions,
 * but skipping whole blocks by their tx_count: only the transactions shown are turned into views, so a deep
 * page costs one map lookup per skipped block in the window (and one range read per 250 blocks beyond it).
 */
export async function confirmedTransactionsPage(
  ctx: NodeContext,
  offset: number,
  limit: number,
): Promise<{ transactions: TxView[]; hasMore: boolean; scannedFromHeight: number }> {
  const head = headHeight(ctx);
  const floor = Math.max(0, head - TX_LIST_SCAN_BLOCKS + 1);
  let skip = offset;
  const out: TxView[] = [];
  let h = head;
  let disk: Block[] = [];
  while (h >= floor && out.length <= limit) {
    let b = recentBlock(ctx, h);
    if (!b) {
      if (disk.length === 0) disk = await readBlocks(ctx, Math.max(floor, h - TX_LIST_DISK_CHUNK + 1), h);
      b = disk.pop() ?? null;
      if (!b || b.index !== h) break;
    }
    h--;
    if (skip >= b.tx_count) {
      skip -= b.tx_count;
      continue;
    }
    for (let j = b.transactions.length - 1 - skip; j >= 0 && out.length <= limit; j--) out.push(confirmedTxView(ctx, b, j));
    skip = 0;
  }
  return { transactions: out.slice(0, limit), hasMore: out.length > limit, scannedFromHeight: h + 1 };
}
