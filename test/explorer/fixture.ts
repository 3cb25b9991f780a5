/**
 * A dev node filled with what the explorer shows: blocks, native transfers, a bonded validator with a
 * delegation (DPoS with short epochs: stake, commission, uptime, rewards), SRC-20 tokens (one named and
 * symbolled as XSS probes), an EVM token whose name and symbol are XSS probes (an ERC-20: its name and symbol
 * reach the address page through eth_call) and whose source is verified (perfect match) by the node's
 * verification service, token transfers with logs, and a contract call with nested calls (the call tree).
 * Shared by the page tests and the browser test.
 */
import { ethers } from 'ethers';
import { EvmSender } from '../../bench/evm-fixtures.js';
import { compiled } from '../helpers/contracts.js';
import { CONTRACTS_DIR, build, filesOf, fixture, postVerify } from '../helpers/verify.js';
import { fromHex, to0x } from '../../ts/util/index.js';
import { devKey, rpcOk, waitReceipt } from '../helpers/evm.js';
import { type TestNode, httpJson } from '../helpers/node.js';
import { waitFor } from '../helpers/util.js';
import {
  type NativeEntities,
  type NftEntities,
  Sender,
  fillNative,
  fillNft,
  startStakedNode,
  waitEpochs,
} from './native-fixture.js';

/** Hostile strings: each would run script or break out of an attribute if a page did not escape it. */
export const XSS_NAME = '<script>alert("name")</script>';
export const XSS_SYMBOL = '"><img src=x onerror=alert(1)>';

export interface ExplorerFixture {
  n: TestNode;
  stop: () => Promise<void>;
  validator: string;
  /** SRC-20 tokens, a delegation. */
  native: NativeEntities;
  /** SRC-721 collections and tokens. */
  nft: NftEntities;
  /** Native transfers (confirmed). */
  nativeTxids: string[];
  /** EVM: the token deployment, a token transfer (a Transfer log) and a nested call (a call tree). */
  deployTxid: string;
  tokenTransferTxid: string;
  nestedTxid: string;
  tokenAddress: string;
  tracerAddress: string;
  /** Holder of the hostile token (its address page lists it). */
  tokenHolder: string;
  /** A block with transactions. */
  busyHeight: number;
}

const E18 = 10n ** 18n;

/** The token as a developer compiles it (metadata included), so the node's verification service can verify it. */
const tokenContract = build({ 'Token.sol': fixture('Token.sol', CONTRACTS_DIR) }, 'Token.sol', 'Token');
const tracerContract = compiled('Tracer');
const tokenIface = new ethers.Interface(tokenContract.abi);
const tracerIface = new ethers.Interface(tracerContract.abi);
const deployData = (bytecode: string, iface: ethers.Interface, args: unknown[]): Uint8Array =>
  fromHex(bytecode + iface.encodeDeploy(args).slice(2));

export async function startExplorerNode(): Promise<ExplorerFixture> {
  const { n, validatorKey, stop } = await startStakedNode();
  try {
    const s = new Sender(n.url);
    const alice = devKey(0);
    const nativeTxids: string[] = [];
    for (let i = 0; i < 6; i++)
      nativeTxids.push(await s.transfer(alice, devKey(1 + (i % 3)).address, 1_000_000n * BigInt(i + 1)));
    const native = await fillNative(n.url, s, validatorKey);
    const nft = await fillNft(n.url, s);
    const evm = await fillEvm(n);
    // Epochs end with the reward distribution: the validator page then shows commission and delegators' rewards.
    await waitEpochs(n.url, 2);
    return {
      n,
      stop,
      validator: validatorKey.address,
      native,
      nft,
      nativeTxids,
      ...evm,
      busyHeight: await heightOf(n, nativeTxids[5]),
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function heightOf(n: TestNode, txid: string): Promise<number> {
  const located = await waitFor(
    async () => {
      const r = await httpJson(`${n.url}/transactions/${txid}`);
      return r.status === 200 && r.body.status === 'confirmed' ? r.body : null;
    },
    30_000,
    'native transfers confirmed',
  );
  return located.block_index;
}

type EvmEntities = Omit<ExplorerFixture, 'n' | 'stop' | 'validator' | 'native' | 'nft' | 'nativeTxids' | 'busyHeight'>;

async function fillEvm(n: TestNode): Promise<EvmEntities> {
  const evm = new EvmSender(devKey(4));
  const send = (raw: Uint8Array) => rpcOk<string>(n.url, 'eth_sendRawTransaction', [to0x(raw)]);
  const deployTxid = await send(
    evm.raw(undefined, deployData(tokenContract.bytecode, tokenIface, [XSS_NAME, XSS_SYMBOL, 1_000_000n * E18])),
  );
  const tracerTxid = await send(evm.raw(undefined, deployData(tracerContract.bytecode, tracerIface, [])));
  const deploy = await waitReceipt(n.url, deployTxid);
  const tracer = await waitReceipt(n.url, tracerTxid);
  const tokenHolder = devKey(5).address;
  const tokenTransferTxid = await send(
    evm.raw(deploy.contractAddress, fromHex(tokenIface.encodeFunctionData('transfer', [tokenHolder, 1234n * E18]))),
  );
  const nestedTxid = await send(
    evm.raw(tracer.contractAddress, fromHex(tracerIface.encodeFunctionData('nested', [7n])), { gas: 1_000_000n }),
  );
  await waitReceipt(n.url, tokenTransferTxid);
  await waitReceipt(n.url, nestedTxid);
  const verified = await postVerify(n.url, { address: deploy.contractAddress, chain: '7120', files: filesOf(tokenContract) });
  if (verified.status !== 200 || verified.body.result?.[0]?.status !== 'perfect') {
    throw new Error(`verification of the token: ${verified.status} ${verified.text}`);
  }
  // Call trees are traced in the background on a transaction's first view; the pages under test show them.
  for (const txid of [deployTxid, tokenTransferTxid, nestedTxid]) {
    await waitFor(
      async () => (await (await fetch(`${n.url}/explorer/tx/${txid.slice(2)}`)).text()).includes('class="list calls"'),
      30_000,
      `call tree of ${txid}`,
    );
  }
  return {
    deployTxid: deployTxid.slice(2),
    tokenTransferTxid: tokenTransferTxid.slice(2),
    nestedTxid: nestedTxid.slice(2),
    tokenAddress: deploy.contractAddress,
    tracerAddress: tracer.contractAddress,
    tokenHolder,
  };
}

/** Every explorer page and alias of the spec (plus search and pagination), filled with the fixture's entities. */
export function explorerPaths(f: ExplorerFixture): { name: string; path: string }[] {
  return [
    { name: 'home', path: '/explorer' },
    { name: 'blocks', path: '/explorer/blocks' },
    { name: 'blocks-page-2', path: '/explorer/blocks?page=2&limit=5' },
    { name: 'block', path: `/explorer/block/${f.busyHeight}` },
    { name: 'block-genesis', path: '/explorer/block/0' },
    { name: 'transactions', path: '/explorer/transactions' },
    { name: 'tx-native', path: `/explorer/tx/${f.nativeTxids[0]}` },
    { name: 'tx-evm-deploy', path: `/explorer/tx/${f.deployTxid}` },
    { name: 'tx-evm-token-transfer', path: `/explorer/tx/0x${f.tokenTransferTxid}` },
    { name: 'tx-evm-call-tree', path: `/explorer/tx/${f.nestedTxid}` },
    { name: 'validators', path: '/explorer/validators' },
    { name: 'validator', path: `/explorer/validators/${f.validator}` },
    { name: 'validator-alias', path: `/explorer/validator/${f.validator}` },
    { name: 'tokens', path: '/explorer/tokens' },
    { name: 'token', path: `/explorer/tokens/${f.native.gold}` },
    { name: 'token-alias', path: `/explorer/token/${f.native.gold}` },
    { name: 'token-holders', path: `/explorer/tokens/${f.native.gold}?tab=holders&limit=2&page=2` },
    { name: 'token-transfers', path: `/explorer/tokens/${f.native.gold}?tab=transfers` },
    { name: 'token-hostile', path: `/explorer/tokens/${f.native.hostile}` },
    { name: 'tx-src20-deploy', path: `/explorer/tx/${f.native.goldDeployTxid}` },
    { name: 'tx-src20-transfer', path: `/explorer/tx/${f.native.goldTransferTxid}` },
    { name: 'tx-src20-hostile-deploy', path: `/explorer/tx/${f.native.hostileDeployTxid}` },
    { name: 'tx-delegate', path: `/explorer/tx/${f.native.delegateTxid}` },
    { name: 'nfts', path: '/explorer/nfts' },
    { name: 'nft-collection', path: `/explorer/nfts/${f.nft.hostile}` },
    { name: 'nft-collection-alias', path: `/explorer/nft/${f.nft.hostile}` },
    { name: 'nft-collection-tokens', path: `/explorer/nfts/${f.nft.hostile}?tab=tokens&limit=2&page=2` },
    { name: 'nft-collection-holders', path: `/explorer/nfts/${f.nft.hostile}?tab=holders` },
    { name: 'nft-collection-events', path: `/explorer/nfts/${f.nft.hostile}?tab=events` },
    { name: 'nft-collection-art', path: `/explorer/nfts/${f.nft.art}` },
    { name: 'nft-token', path: `/explorer/nfts/${f.nft.hostile}/2` },
    { name: 'nft-token-alias', path: `/explorer/nft/${f.nft.hostile}/1` },
    { name: 'nft-token-burned', path: `/explorer/nfts/${f.nft.hostile}/3` },
    { name: 'tx-nft-deploy', path: `/explorer/tx/${f.nft.deployTxid}` },
    { name: 'tx-nft-mint', path: `/explorer/tx/${f.nft.mintTxid}` },
    { name: 'tx-nft-transfer', path: `/explorer/tx/${f.nft.transferTxid}` },
    { name: 'address-nft-owner', path: `/explorer/address/${f.nft.owner}` },
    { name: 'address-nfts', path: `/explorer/address/${f.nft.owner}?tab=nfts` },
    { name: 'address-nft-events', path: `/explorer/address/${f.nft.owner}?tab=nft-events` },
    { name: 'address', path: `/explorer/address/${devKey(0).address}` },
    { name: 'address-token-transfers', path: `/explorer/address/${devKey(0).address}?tab=token-transfers` },
    { name: 'address-src20-holder', path: `/explorer/address/${devKey(5).address}` },
    { name: 'address-delegator', path: `/explorer/address/${devKey(6).address}` },
    { name: 'address-token-holder', path: `/explorer/address/${f.tokenHolder}` },
    { name: 'address-contract', path: `/explorer/address/${f.tokenAddress}` },
    { name: 'richlist', path: '/explorer/richlist' },
    { name: 'mempool', path: '/explorer/mempool' },
  ];
}
