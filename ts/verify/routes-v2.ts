/**
 * Sourcify's API v2, the part Foundry's `forge verify-contract --verifier sourcify` speaks: a verification
 * job from a standard JSON input (or metadata and sources), polled by id, and the contract lookup.
 */
import type { HttpRequest } from '../http/index.js';
import { AlreadyVerifiedError, InvalidVerifyRequestError, NotVerifiedError, VerifyError } from './errors.js';
import { type VerifyHooks, type VerifyResult, type VerifyRoute, jsonObject, v2, v2ErrorBody } from './http-common.js';
import type { VerificationRecord } from './interface.js';
import { type V2ContractMinimal, overallMatch, v2Match } from './jobs.js';
import { type ContractToVerify, contractFromMetadataObject, contractFromStandardJson } from './metadata.js';
import { type VerificationService, addressParam, checksum } from './service.js';

/** A second job for a contract while one runs (Sourcify: 429). */
class DuplicateJobError extends VerifyError {
  constructor(chainId: number, address: string) {
    super(`Contract ${address} on chain ${chainId} is already being verified`, 429, 'duplicate_verification_request');
  }
}

function minimal(r: VerificationRecord): V2ContractMinimal {
  const runtimeMatch = v2Match(r.runtimeMatch);
  const creationMatch = v2Match(r.creationMatch);
  return {
    match: overallMatch(runtimeMatch, creationMatch),
    creationMatch,
    runtimeMatch,
    chainId: String(r.chainId),
    address: checksum(r.address),
    verifiedAt: r.verifiedAt,
  };
}

/** Start a job verifying `contract`; answers 202 with its id. */
async function startJob(
  svc: VerificationService,
  chainId: number,
  address: string,
  contract: () => ContractToVerify,
  creationTxHash: unknown,
  hooks: VerifyHooks,
): Promise<VerifyResult> {
  const shown = checksum(address);
  const existing = await svc.lookup(chainId, address);
  if (existing?.runtimeMatch === 'perfect' && existing.creationMatch === 'perfect')
    throw new AlreadyVerifiedError(chainId, shown);
  if (svc.jobs.running(chainId, shown)) throw new DuplicateJobError(chainId, shown);
  if (creationTxHash !== undefined && creationTxHash !== null && typeof creationTxHash !== 'string')
    throw new InvalidVerifyRequestError('creationTransactionHash must be a string');
  const input = contract();
  const job = svc.jobs.start(chainId, shown);
  svc.verify(chainId, address, input, (creationTxHash as string | null | undefined) ?? undefined).then(
    ({ record }) => svc.jobs.succeed(job, minimal(record)),
    (err: unknown) => svc.jobs.fail(job, v2ErrorBody(err, `verification job ${job.verificationId}`, hooks)),
  );
  return { status: 202, body: { verificationId: job.verificationId } };
}

/** POST /v2/verify/:chainId/:address: `{ stdJsonInput, compilerVersion, contractIdentifier, creationTransactionHash? }`. */
async function verifyStdJson(
  svc: VerificationService,
  req: HttpRequest,
  p: Record<string, string>,
  hooks: VerifyHooks,
): Promise<VerifyResult> {
  const chainId = svc.chainParam(p.chainId);
  const address = addressParam(p.address);
  const body = jsonObject(req);
  return startJob(
    svc,
    chainId,
    address,
    () => contractFromStandardJson(body.stdJsonInput, body.compilerVersion, body.contractIdentifier),
    body.creationTransactionHash,
    hooks,
  );
}

/** POST /v2/verify/metadata/:chainId/:address: `{ metadata, sources, creationTransactionHash? }`. */
async function verifyMetadata(
  svc: VerificationService,
  req: HttpRequest,
  p: Record<string, string>,
  hooks: VerifyHooks,
): Promise<VerifyResult> {
  const chainId = svc.chainParam(p.chainId);
  const address = addressParam(p.address);
  const body = jsonObject(req);
  const sources = body.sources;
  if (typeof sources !== 'object' || sources === null || Object.values(sources).some((s) => typeof s !== 'string'))
    throw new InvalidVerifyRequestError('sources must map each source path to its content');
  return startJob(
    svc,
    chainId,
    address,
    () => contractFromMetadataObject(body.metadata, sources as Record<string, string>),
    body.creationTransactionHash,
    hooks,
  );
}

/** The optional parts of GET /v2/contract (`fields=a,b` or `all`; `omit=` the reverse). */
const FIELDS: Record<string, (r: VerificationRecord) => unknown> = {
  abi: (r) => r.abi,
  metadata: (r) => JSON.parse(r.files['metadata.json'] ?? 'null'),
  sources: (r) =>
    Object.fromEntries(
      Object.entries(r.files)
        .filter(([f]) => f.startsWith('sources/'))
        .map(([f, content]) => [f.slice('sources/'.length), { content }]),
    ),
  compilation: (r) => ({
    language: r.language,
    compiler: 'solc',
    compilerVersion: r.compilerVersion,
    compilerSettings: r.compilerSettings,
    name: r.contractName,
    fullyQualifiedName: `${r.contractPath}:${r.contractName}`,
  }),
  deployment: (r) => ({
    transactionHash: r.deployment.transactionHash,
    blockNumber: r.deployment.blockNumber === null ? null : String(r.deployment.blockNumber),
    transactionIndex: r.deployment.transactionIndex === null ? null : String(r.deployment.transactionIndex),
    deployer: r.deployment.deployer ? checksum(r.deployment.deployer) : null,
  }),
  constructorArguments: (r) => r.constructorArguments,
};

function selectedFields(q: URLSearchParams): string[] {
  const fields = q.get('fields');
  const omit = q.get('omit');
  if (fields && omit) throw new InvalidVerifyRequestError('Cannot specify both fields and omit');
  const check = (list: string[]) => {
    for (const f of list) if (!(f in FIELDS)) throw new InvalidVerifyRequestError(`Field selector ${f} is not a valid field`);
    return list;
  };
  if (fields) return fields === 'all' ? Object.keys(FIELDS) : check(fields.split(','));
  if (omit) {
    const left = new Set(check(omit.split(',')));
    return Object.keys(FIELDS).filter((f) => !left.has(f));
  }
  return [];
}

/** GET /v2/contract/:chainId/:address: the match and the selected details; 404 with null matches when unverified. */
async function contract(svc: VerificationService, req: HttpRequest, p: Record<string, string>): Promise<VerifyResult> {
  const chainId = svc.chainParam(p.chainId);
  const address = addressParam(p.address);
  const fields = selectedFields(req.query);
  const r = await svc.lookup(chainId, address);
  if (!r) {
    return {
      status: 404,
      body: { match: null, creationMatch: null, runtimeMatch: null, chainId: String(chainId), address: checksum(address) },
    };
  }
  const body: Record<string, unknown> = { ...minimal(r) };
  for (const f of fields) body[f] = FIELDS[f](r);
  return { body };
}

/** GET /v2/verify/:verificationId: the job. */
async function job(svc: VerificationService, _req: HttpRequest, p: Record<string, string>): Promise<VerifyResult> {
  const j = svc.jobs.get(p.verificationId);
  if (!j) throw new NotVerifiedError(`No verification job found for id ${p.verificationId}`, 'job_not_found');
  return { body: j };
}

export const v2Routes: VerifyRoute[] = [
  {
    method: 'POST',
    path: '/v2/verify/:chainId/:address',
    summary: 'Start verifying from a standard JSON input (202 with a verificationId)',
    handler: v2(verifyStdJson),
  },
  {
    method: 'POST',
    path: '/v2/verify/metadata/:chainId/:address',
    summary: 'Start verifying from metadata and sources (202 with a verificationId)',
    handler: v2(verifyMetadata),
  },
  { method: 'GET', path: '/v2/verify/:verificationId', summary: 'A verification job', handler: v2(job) },
  {
    method: 'GET',
    path: '/v2/contract/:chainId/:address',
    summary: 'A verified contract (fields=abi,sources,... or all)',
    handler: v2(contract),
  },
];
