/**
 * Sourcify's API v1 (the spec's paths, and what the Hardhat verify plugin calls): POST /verify with the
 * files, file lookups, the repository's static files, check-by-addresses, /chains.
 */
import type { HttpRequest } from '../http/index.js';
import { AlreadyPartialError, InvalidVerifyRequestError, NotVerifiedError } from './errors.js';
import { type VerifyResult, type VerifyRoute, jsonObject, v1 } from './http-common.js';
import type { VerificationRecord } from './interface.js';
import { contractFromFiles } from './metadata.js';
import { CHAIN_NAMES, VERIFY_CHAINS, type VerificationService, addressParam, checksum } from './service.js';

/** Addresses one check-by-addresses request may ask about. */
export const MAX_CHECK_ADDRESSES = 100;

const matchDir = (r: VerificationRecord): string => (r.match === 'perfect' ? 'full_match' : 'partial_match');
const filesStatus = (r: VerificationRecord): string => (r.match === 'perfect' ? 'full' : 'partial');
/** Where a record's files sit in the repository layout, e.g. contracts/full_match/7120/0xAbC…/ */
const repoDir = (r: VerificationRecord): string => `contracts/${matchDir(r)}/${r.chainId}/${checksum(r.address)}`;

/** The v1 answer of a verification: `{ result: [{ address, chainId, status, ... }] }`. */
function verifyAnswer(r: VerificationRecord, extra: Record<string, unknown> = {}): VerifyResult {
  const item: Record<string, unknown> = { address: checksum(r.address), chainId: String(r.chainId), status: r.match, ...extra };
  if (Object.keys(r.libraryMap).length) item.libraryMap = r.libraryMap;
  return { body: { result: [item] } };
}

function filesMap(body: Record<string, unknown>): Record<string, string> {
  const files = body.files;
  if (typeof files !== 'object' || files === null || Array.isArray(files) || Object.keys(files).length === 0)
    throw new InvalidVerifyRequestError("Couldn't extract files from the request. Please make sure you have added files");
  for (const [name, content] of Object.entries(files)) {
    if (typeof content !== 'string') throw new InvalidVerifyRequestError(`file ${name} must be a string`);
  }
  return files as Record<string, string>;
}

function chosenIndex(raw: unknown): number | undefined {
  if (raw === undefined || raw === null || raw === '') return undefined;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(n)) throw new InvalidVerifyRequestError(`chosenContract must be an index, got ${String(raw)}`);
  return n;
}

/** POST /verify: `{ address, chain, files, chosenContract?, creatorTxHash? }`. */
async function verifyFiles(svc: VerificationService, req: HttpRequest): Promise<VerifyResult> {
  const body = jsonObject(req);
  const address = addressParam(body.address);
  const chainId = svc.chainParam(body.chain);
  const files = filesMap(body);
  const chosen = chosenIndex(body.chosenContract);
  const creatorTx = body.creatorTxHash === undefined || body.creatorTxHash === null ? undefined : String(body.creatorTxHash);
  // Already perfect: nothing can improve it (Sourcify answers with the stored match and when it was stored).
  const existing = await svc.lookup(chainId, address);
  if (existing?.match === 'perfect') return verifyAnswer(existing, { storageTimestamp: existing.verifiedAt });
  const contract = contractFromFiles(files, chosen);
  const { record, stored } = await svc.verify(chainId, address, contract, creatorTx);
  if (stored.stored) return verifyAnswer(record);
  if (stored.existing.match === 'perfect') return verifyAnswer(stored.existing, { storageTimestamp: stored.existing.verifiedAt });
  throw new AlreadyPartialError(chainId, checksum(address));
}

/** The verified record at :chain/:address, or 404 in Sourcify's words; `fullOnly` for the non-`any` lookups. */
async function record(svc: VerificationService, p: Record<string, string>, fullOnly = false): Promise<VerificationRecord> {
  const chainId = svc.chainParam(p.chain);
  const r = await svc.lookup(chainId, addressParam(p.address));
  if (!r || (fullOnly && r.match !== 'perfect')) throw new NotVerifiedError();
  return r;
}

function fileList(r: VerificationRecord): { name: string; path: string; content: string }[] {
  const dir = repoDir(r);
  return Object.entries(r.files).map(([file, content]) => ({
    name: file.slice(file.lastIndexOf('/') + 1),
    path: `${dir}/${file}`,
    content,
  }));
}

function fileUrls(svc: VerificationService, r: VerificationRecord): string[] {
  const dir = repoDir(r);
  return Object.keys(r.files).map((file) => `${svc.publicUrl}/repository/${dir}/${file}`);
}

/** `addresses` and `chainIds` of the check routes, each checked. */
function checkParams(svc: VerificationService, q: URLSearchParams): { addresses: string[]; chainIds: number[] } {
  const addresses = (q.get('addresses') ?? '').split(',').filter((a) => a !== '');
  const chains = (q.get('chainIds') ?? '').split(',').filter((c) => c !== '');
  if (addresses.length === 0) throw new InvalidVerifyRequestError('addresses is required (comma-separated)');
  if (chains.length === 0) throw new InvalidVerifyRequestError('chainIds is required (comma-separated)');
  if (addresses.length > MAX_CHECK_ADDRESSES)
    throw new InvalidVerifyRequestError(`at most ${MAX_CHECK_ADDRESSES} addresses per request, got ${addresses.length}`);
  for (const a of addresses) addressParam(a);
  return { addresses, chainIds: chains.map((c) => svc.chainParam(c)) };
}

/** GET /check-all-by-addresses: every match per address and chain, or status "false". */
async function checkAll(svc: VerificationService, req: HttpRequest): Promise<VerifyResult> {
  const { addresses, chainIds } = checkParams(svc, req.query);
  const out = [];
  for (const a of addresses) {
    const found = [];
    for (const chainId of chainIds) {
      const r = await svc.lookup(chainId, a.toLowerCase());
      if (r) found.push({ chainId: String(chainId), status: r.match });
    }
    out.push(found.length ? { address: checksum(a), chainIds: found } : { address: checksum(a), status: 'false' });
  }
  return { body: out };
}

/** GET /check-by-addresses: perfect matches only (Sourcify's older check, which Foundry's v1 client reads). */
async function checkPerfect(svc: VerificationService, req: HttpRequest): Promise<VerifyResult> {
  const { addresses, chainIds } = checkParams(svc, req.query);
  const out = [];
  for (const a of addresses) {
    const found: string[] = [];
    for (const chainId of chainIds) {
      if ((await svc.lookup(chainId, a.toLowerCase()))?.match === 'perfect') found.push(String(chainId));
    }
    out.push(
      found.length ? { address: checksum(a), status: 'perfect', chainIds: found } : { address: checksum(a), status: 'false' },
    );
  }
  return { body: out };
}

/** GET /chains: the chains of the spec; `supported` says whether this instance verifies it. */
function chains(svc: VerificationService): Promise<VerifyResult> {
  const served = svc.servedChains();
  return Promise.resolve({
    body: VERIFY_CHAINS.map((chainId) => ({
      name: CHAIN_NAMES[chainId],
      title: CHAIN_NAMES[chainId],
      chainId,
      supported: served.includes(chainId),
      rpc: [],
    })),
  });
}

/**
 * GET /repository/contracts/:match/:chain/:address/<file>: one stored file as text; the directory itself (the
 * contract URL Hardhat prints) lists the files' URLs.
 */
async function repositoryFile(svc: VerificationService, _req: HttpRequest, p: Record<string, string>): Promise<VerifyResult> {
  const r = await record(svc, p);
  if (p.match !== matchDir(r)) throw new NotVerifiedError('File not found');
  const file = p['*'] ?? '';
  if (file === '') return { body: fileUrls(svc, r) };
  const content = r.files[file];
  if (content === undefined) throw new NotVerifiedError('File not found');
  const type = file.endsWith('.json') ? 'application/json' : 'text/plain; charset=utf-8';
  return { raw: content, headers: { 'content-type': type } };
}

export const v1Routes: VerifyRoute[] = [
  {
    method: 'POST',
    path: '/verify',
    summary: 'Verify a deployed contract from its metadata.json and sources',
    handler: v1(verifyFiles),
  },
  {
    method: 'GET',
    path: '/files/any/:chain/:address',
    summary: 'Verified files (full or partial match) with the match status',
    handler: v1(async (svc, _req, p) => {
      const r = await record(svc, p);
      return { body: { status: filesStatus(r), files: fileList(r) } };
    }),
  },
  {
    method: 'GET',
    path: '/files/:chain/:address',
    summary: 'Verified files of a full match',
    handler: v1(async (svc, _req, p) => ({ body: fileList(await record(svc, p, true)) })),
  },
  {
    method: 'GET',
    path: '/files/tree/any/:chain/:address',
    summary: 'URLs of the verified files (full or partial match) with the match status',
    handler: v1(async (svc, _req, p) => {
      const r = await record(svc, p);
      return { body: { status: filesStatus(r), files: fileUrls(svc, r) } };
    }),
  },
  {
    method: 'GET',
    path: '/files/tree/:chain/:address',
    summary: 'URLs of the verified files of a full match',
    handler: v1(async (svc, _req, p) => ({ body: fileUrls(svc, await record(svc, p, true)) })),
  },
  { method: 'GET', path: '/check-all-by-addresses', summary: 'Full and partial matches of addresses', handler: v1(checkAll) },
  { method: 'GET', path: '/check-by-addresses', summary: 'Full matches of addresses', handler: v1(checkPerfect) },
  { method: 'GET', path: '/chains', summary: 'Chains of the verification service (7119 and 7120)', handler: v1(chains) },
  {
    method: 'GET',
    path: '/repository/contracts/:match/:chain/:address',
    summary: "URLs of a verified contract's files (the contract URL Hardhat prints)",
    handler: v1(repositoryFile),
  },
  {
    method: 'GET',
    path: '/repository/contracts/:match/:chain/:address/*',
    summary: 'One verified file, as the repository serves it',
    handler: v1(repositoryFile),
  },
];
