/**
 * Sourcify's match rules, on lowercase hex without 0x. Before comparing, the recompiled code takes from the
 * deployed code what deployment put there: a library's own address (call protection), the values of
 * immutables (at the compiler's immutableReferences) and the addresses of linked libraries (at its
 * linkReferences). Then: identical, with a metadata hash in the auxdata = perfect; identical once the
 * auxdata regions are taken from the deployed code = partial; else a mismatch at the first differing byte.
 */
import { type AuxdataRegion, hasMetadataHash } from './auxdata.js';
import type { CompiledContract, LinkReferences } from './compile-task.js';
import { BytecodeMismatchError, VerifyError } from './errors.js';
import type { MatchKind } from './interface.js';

export interface RuntimeMatch {
  match: MatchKind;
  /** `path:Library` to 0x address. */
  libraryMap: Record<string, string>;
  /** Immutable values by AST id (0x hex). */
  immutables: Record<string, string>;
}

export interface CreationMatch {
  match: MatchKind;
  libraryMap: Record<string, string>;
  /** The input's tail after the creation code (0x hex, "0x" when empty). */
  constructorArguments: string;
}

/** Solidity's placeholder of a library never linked: PUSH20 of zeros at the start of a library's runtime. */
const CALL_PROTECTION = `73${'00'.repeat(20)}`;

const splice = (code: string, byteOffset: number, bytes: string): string =>
  code.slice(0, byteOffset * 2) + bytes + code.slice(byteOffset * 2 + bytes.length);

const bytesAt = (code: string, byteOffset: number, length: number): string =>
  code.slice(byteOffset * 2, (byteOffset + length) * 2);

/** Fill the library placeholders of `code` with the addresses found at the same places in `deployed`. */
function linkLibraries(
  code: string,
  deployed: string,
  refs: LinkReferences,
): { code: string; libraryMap: Record<string, string> } {
  const libraryMap: Record<string, string> = {};
  let out = code;
  for (const [file, libs] of Object.entries(refs)) {
    for (const [name, places] of Object.entries(libs)) {
      for (const { start, length } of places) {
        const address = bytesAt(deployed, start, length);
        if (address.length !== length * 2) continue;
        libraryMap[`${file}:${name}`] ??= `0x${address}`;
        out = splice(out, start, address);
      }
    }
  }
  return { code: out, libraryMap };
}

/** Take the auxdata regions of `code` from `deployed` (the partial match's transformation). */
function withDeployedAuxdata(code: string, deployed: string, regions: readonly AuxdataRegion[]): string {
  let out = code;
  for (const { offset, value } of regions) {
    const bytes = bytesAt(deployed, offset, value.length / 2);
    if (bytes.length === value.length) out = splice(out, offset, bytes);
  }
  return out;
}

/** Perfect needs a metadata hash in every auxdata: code compiled without one says nothing of its sources' metadata. */
const kindOfExactMatch = (regions: readonly AuxdataRegion[]): MatchKind =>
  regions.length > 0 && regions.every((r) => hasMetadataHash(r.value)) ? 'perfect' : 'partial';

function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i += 2) if (a[i] !== b[i] || a[i + 1] !== b[i + 1]) return i / 2;
  return n / 2;
}

/** Compare the recompiled runtime code with the deployed code; throws BytecodeMismatchError naming the first differing byte. */
export function matchRuntime(compiled: CompiledContract, deployedHex: string): RuntimeMatch {
  const { runtime } = compiled;
  if (runtime.object.length === 0)
    throw new VerifyError(
      'the compiled contract has no runtime code (an abstract contract or an interface?)',
      500,
      'compiled_bytecode_is_zero',
    );
  let code = runtime.object;
  if (code.startsWith(CALL_PROTECTION) && deployedHex.startsWith('73')) code = splice(code, 1, bytesAt(deployedHex, 1, 20));
  const immutables: Record<string, string> = {};
  for (const [id, places] of Object.entries(runtime.immutableReferences)) {
    for (const { start, length } of places) {
      const value = bytesAt(deployedHex, start, length);
      if (value.length !== length * 2) continue;
      immutables[id] ??= `0x${value}`;
      code = splice(code, start, value);
    }
  }
  const linked = linkLibraries(code, deployedHex, runtime.linkReferences);
  code = linked.code;
  if (code === deployedHex) return { match: kindOfExactMatch(runtime.auxdata), libraryMap: linked.libraryMap, immutables };
  const withAuxdata = withDeployedAuxdata(code, deployedHex, runtime.auxdata);
  if (withAuxdata === deployedHex) return { match: 'partial', libraryMap: linked.libraryMap, immutables };
  throw new BytecodeMismatchError(firstDifference(withAuxdata, deployedHex), withAuxdata.length / 2, deployedHex.length / 2);
}

/**
 * Compare the recompiled creation code with the start of the creation transaction's input; the rest of the
 * input is the constructor arguments. Null when the input does not start with the code (e.g. a factory call).
 */
export function matchCreation(compiled: CompiledContract, inputHex: string): CreationMatch | null {
  const { creation } = compiled;
  if (creation.object.length === 0 || inputHex.length < creation.object.length) return null;
  const linked = linkLibraries(creation.object, inputHex, creation.linkReferences);
  const head = inputHex.slice(0, linked.code.length);
  const tail = `0x${inputHex.slice(linked.code.length)}`;
  if (linked.code === head)
    return { match: kindOfExactMatch(creation.auxdata), libraryMap: linked.libraryMap, constructorArguments: tail };
  if (withDeployedAuxdata(linked.code, head, creation.auxdata) === head)
    return { match: 'partial', libraryMap: linked.libraryMap, constructorArguments: tail };
  return null;
}
