/**
 * From what a client uploads to what the compiler gets: Solidity metadata (Sourcify's `files` upload, API v1,
 * and API v2's metadata route) or a standard JSON input (API v2, Foundry). Sources are matched to the
 * metadata by keccak256 of their content, not by file name, as Sourcify does.
 */
import { keccak256 } from '../crypto/index.js';
import { toHex } from '../util/index.js';
import { InvalidVerifyRequestError, MissingSourcesError } from './errors.js';

/** The compiler outputs verification reads for the target contract. */
export const OUTPUT_SELECTION = [
  'abi',
  'metadata',
  'evm.bytecode.object',
  'evm.bytecode.linkReferences',
  'evm.deployedBytecode.object',
  'evm.deployedBytecode.linkReferences',
  'evm.deployedBytecode.immutableReferences',
  'evm.legacyAssembly',
];

export interface StandardJsonInput {
  language: string;
  sources: Record<string, { content: string }>;
  settings: Record<string, unknown>;
}

/** A contract ready to compile: the exact compiler, its input and which contract of it to compare. */
export interface ContractToVerify {
  compilerVersion: string;
  input: StandardJsonInput;
  target: { path: string; name: string };
  /** The uploaded metadata.json text (stored as is); null when verified from a standard JSON input. */
  metadataText: string | null;
}

interface SolidityMetadata {
  language: string;
  compiler: { version: string };
  settings: Record<string, unknown> & { compilationTarget: Record<string, string>; libraries?: Record<string, string> };
  sources: Record<string, { keccak256?: string; content?: string }>;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** 0.8.37+commit.f401782d from what clients and compilers write (v prefix, Emscripten suffix). */
export function normalizeCompilerVersion(v: string): string {
  return v
    .trim()
    .replace(/^v/, '')
    .replace(/\.Emscripten\.clang$/, '');
}

function asMetadata(text: string): SolidityMetadata | null {
  let m: unknown;
  try {
    m = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isObject(m) || typeof m.language !== 'string' || !isObject(m.compiler) || !isObject(m.settings) || !isObject(m.sources))
    return null;
  if (typeof m.compiler.version !== 'string' || !isObject(m.settings.compilationTarget)) return null;
  return m as unknown as SolidityMetadata;
}

const keccakHex = (text: string): string => `0x${toHex(keccak256(Buffer.from(text, 'utf8')))}`;

/** The same file as an editor or a checkout may have changed it (line endings, final newline). */
function variations(content: string): string[] {
  const lf = content.replace(/\r\n/g, '\n');
  const out = new Set([content, lf, lf.replace(/\n/g, '\r\n'), `${content}\n`, `${lf.trimEnd()}\n`]);
  if (content.endsWith('\n')) out.add(content.slice(0, -1));
  return [...out];
}

/** Uploaded files by the keccak256 of their content (and of its variations). */
function byHash(files: Record<string, string>): Map<string, string> {
  const map = new Map<string, string>();
  for (const content of Object.values(files)) {
    for (const v of variations(content)) {
      const h = keccakHex(v);
      if (!map.has(h)) map.set(h, v);
    }
  }
  return map;
}

/** Standard JSON `libraries` from the metadata's `{ "path:Name": address }` form. */
function librariesFromMetadata(libs: Record<string, string> | undefined): Record<string, Record<string, string>> {
  const out: Record<string, Record<string, string>> = {};
  for (const [fq, address] of Object.entries(libs ?? {})) {
    const i = fq.lastIndexOf(':');
    const path = i >= 0 ? fq.slice(0, i) : '';
    const name = fq.slice(i + 1);
    out[path] ??= {};
    out[path][name] = address;
  }
  return out;
}

/**
 * The contract described by the uploaded files: the metadata file (any JSON file that is Solidity metadata;
 * `chosenContract` picks one when there are several) and its sources, found by hash.
 */
export function contractFromFiles(files: Record<string, string>, chosenContract?: number): ContractToVerify {
  const found: { text: string; meta: SolidityMetadata }[] = [];
  for (const [name, text] of Object.entries(files)) {
    if (!name.endsWith('.json')) continue;
    const meta = asMetadata(text);
    if (meta) found.push({ text, meta });
  }
  if (found.length === 0) throw new InvalidVerifyRequestError('Metadata file not found. Did you include "metadata.json"?');
  if (found.length > 1 && chosenContract === undefined) {
    const contractsToChoose = found.map(({ meta }) => {
      const [path, name] = Object.entries(meta.settings.compilationTarget)[0] ?? ['', ''];
      return { name, path };
    });
    throw new InvalidVerifyRequestError(
      `Detected ${found.length} contracts (${contractsToChoose.map((c) => c.name).join(', ')}), but can only verify 1 at a time: choose one with chosenContract (its index)`,
      { contractsToChoose },
    );
  }
  const chosen = found[chosenContract ?? 0];
  if (!chosen)
    throw new InvalidVerifyRequestError(`chosenContract ${chosenContract} is out of range (${found.length} contracts)`);
  return contractFromMetadata(chosen.meta, chosen.text, files);
}

/** API v2's metadata route: the metadata object and the sources by path. */
export function contractFromMetadataObject(metadata: unknown, sources: Record<string, string>): ContractToVerify {
  const text = JSON.stringify(metadata);
  const meta = asMetadata(text);
  if (!meta)
    throw new InvalidVerifyRequestError(
      'metadata must be Solidity metadata (language, compiler.version, settings.compilationTarget, sources)',
    );
  return contractFromMetadata(meta, text, sources);
}

function contractFromMetadata(meta: SolidityMetadata, text: string, files: Record<string, string>): ContractToVerify {
  if (meta.language !== 'Solidity')
    throw new InvalidVerifyRequestError(`language ${meta.language} is not supported (Solidity only)`);
  const targets = Object.entries(meta.settings.compilationTarget);
  if (targets.length !== 1) throw new InvalidVerifyRequestError('the metadata must name exactly one compilationTarget');
  const hashes = byHash(files);
  const sources: Record<string, { content: string }> = {};
  const missing: string[] = [];
  for (const [path, src] of Object.entries(meta.sources)) {
    const content =
      typeof src.content === 'string' ? src.content : src.keccak256 ? hashes.get(src.keccak256.toLowerCase()) : undefined;
    if (content === undefined) missing.push(`${path} (keccak256 ${src.keccak256 ?? 'not given'})`);
    else sources[path] = { content };
  }
  if (missing.length) throw new MissingSourcesError(missing);
  const { compilationTarget: _target, libraries, ...settings } = meta.settings;
  const [path, name] = targets[0];
  return {
    compilerVersion: normalizeCompilerVersion(meta.compiler.version),
    input: {
      language: 'Solidity',
      sources,
      settings: { ...settings, libraries: librariesFromMetadata(libraries), outputSelection: selectionFor(path, name) },
    },
    target: { path, name },
    metadataText: text,
  };
}

/** API v2's standard JSON route: the input as the client compiled it, `path:Name` naming the contract. */
export function contractFromStandardJson(
  stdJsonInput: unknown,
  compilerVersion: unknown,
  contractIdentifier: unknown,
): ContractToVerify {
  if (!isObject(stdJsonInput)) throw new InvalidVerifyRequestError('Standard JSON input is required.');
  if (stdJsonInput.language !== 'Solidity')
    throw new InvalidVerifyRequestError('Standard JSON input must have language Solidity.');
  if (!isObject(stdJsonInput.sources) || Object.keys(stdJsonInput.sources).length === 0)
    throw new InvalidVerifyRequestError('Standard JSON input must contain a sources field.');
  const sources: Record<string, { content: string }> = {};
  for (const [path, src] of Object.entries(stdJsonInput.sources)) {
    if (!isObject(src) || typeof src.content !== 'string')
      throw new InvalidVerifyRequestError('Standard JSON input must contain a content field for each source.');
    sources[path] = { content: src.content };
  }
  if (typeof compilerVersion !== 'string' || compilerVersion.trim() === '')
    throw new InvalidVerifyRequestError('compilerVersion is required.');
  if (typeof contractIdentifier !== 'string') throw new InvalidVerifyRequestError('Contract identifier is required');
  const i = contractIdentifier.lastIndexOf(':');
  if (i <= 0 || i === contractIdentifier.length - 1)
    throw new InvalidVerifyRequestError(
      "The contractIdentifier must consist of the file path and the contract name separated by a ':'.",
    );
  const path = contractIdentifier.slice(0, i);
  const name = contractIdentifier.slice(i + 1);
  if (!(path in sources)) throw new InvalidVerifyRequestError(`contractIdentifier names ${path}, which is not among the sources`);
  const settings = isObject(stdJsonInput.settings) ? stdJsonInput.settings : {};
  return {
    compilerVersion: normalizeCompilerVersion(compilerVersion),
    input: { language: 'Solidity', sources, settings: { ...settings, outputSelection: selectionFor(path, name) } },
    target: { path, name },
    metadataText: null,
  };
}

const selectionFor = (path: string, name: string) => ({ [path]: { [name]: OUTPUT_SELECTION } });

/** The settings to store with a record: what was compiled, without our output selection. */
export function storedSettings(input: StandardJsonInput): Record<string, unknown> {
  const { outputSelection: _selection, ...rest } = input.settings;
  return rest;
}
