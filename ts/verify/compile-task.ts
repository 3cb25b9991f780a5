/**
 * One compilation on a compile worker: the task the main thread sends and the reply it gets (shared by
 * compile-pool.ts and compile-worker.ts). The worker loads the compiler, compiles, and locates the CBOR
 * auxdata of the target contract's code (compiling a second time when it carries several).
 */
import { createRequire } from 'node:module';
import { type AuxdataRegion, auxdataRegionsByDiff, auxdatasInLegacyAssembly, trailingAuxdata } from './auxdata.js';
import type { CompilerRef } from './compiler.js';
import { type StandardJsonInput, normalizeCompilerVersion } from './metadata.js';

const require = createRequire(import.meta.url);

export interface CompileTask {
  compiler: CompilerRef;
  input: StandardJsonInput;
  target: { path: string; name: string };
}

/** `{ file: { library: [{ start, length }] } }` as solc reports link references. */
export type LinkReferences = Record<string, Record<string, { start: number; length: number }[]>>;
/** `{ astId: [{ start, length }] }` as solc reports immutable references. */
export type ImmutableReferences = Record<string, { start: number; length: number }[]>;

export interface CompiledContract {
  abi: unknown[];
  /** The metadata the compiler wrote for this compilation. */
  metadata: string;
  creation: { object: string; linkReferences: LinkReferences; auxdata: AuxdataRegion[] };
  runtime: { object: string; linkReferences: LinkReferences; immutableReferences: ImmutableReferences; auxdata: AuxdataRegion[] };
}

export type CompileReply =
  | { kind: 'ok'; contract: CompiledContract }
  | { kind: 'compile-error'; message: string }
  | { kind: 'compiler-error'; message: string };

interface Solc {
  compile(input: string): string;
  version(): string;
}

interface SolcOutput {
  errors?: { severity: string; formattedMessage?: string; message: string }[];
  contracts?: Record<
    string,
    Record<
      string,
      {
        abi: unknown[];
        metadata: string;
        evm: {
          bytecode: { object: string; linkReferences?: LinkReferences };
          deployedBytecode: { object: string; linkReferences?: LinkReferences; immutableReferences?: ImmutableReferences };
          legacyAssembly?: unknown;
        };
      }
    >
  >;
}

/** Compilers loaded by this thread, by version (loading soljson takes ~0.5 s; a warm worker keeps it). */
const loaded = new Map<string, Solc>();

class CompilerLoadError extends Error {}

function loadCompiler(ref: CompilerRef): Solc {
  const hit = loaded.get(ref.version);
  if (hit) return hit;
  let solc: Solc;
  try {
    solc =
      ref.kind === 'bundled'
        ? (require('solc') as Solc)
        : (require('solc/wrapper') as (soljson: unknown) => Solc)(require(ref.path) as unknown);
  } catch (err) {
    throw new CompilerLoadError(
      `cannot load the compiler ${ref.kind === 'file' ? ref.path : 'bundled with solc'}: ${(err as Error).message}`,
    );
  }
  const actual = normalizeCompilerVersion(solc.version());
  // A version named without its commit accepts any build of that release.
  const wanted = ref.version.includes('+') ? ref.version : `${ref.version}+`;
  if (!(actual === ref.version || actual.startsWith(wanted))) {
    const where = ref.kind === 'file' ? `the file ${ref.path}` : 'the bundled solc';
    throw new CompilerLoadError(`compiler ${ref.version} is not available: ${where} is solc ${actual}`);
  }
  loaded.set(ref.version, solc);
  return solc;
}

function compileOnce(solc: Solc, input: StandardJsonInput): SolcOutput {
  return JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
}

/** The compiler's error messages (warnings left out), or null when it reported none. */
function compileErrors(out: SolcOutput): string | null {
  const errors = (out.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length === 0) return null;
  return errors.map((e) => (e.formattedMessage ?? e.message).trim()).join('\n');
}

/** Auxdata regions of the runtime and creation code: at the end when there is one auxdata, else by a second compilation. */
function locateAuxdata(
  solc: Solc,
  task: CompileTask,
  creation: string,
  runtime: string,
  assembly: unknown,
): { creation: AuxdataRegion[]; runtime: AuxdataRegion[] } {
  const auxdatas = auxdatasInLegacyAssembly(assembly);
  if (auxdatas.length === 0) return { creation: [], runtime: [] };
  if (auxdatas.length === 1) {
    const rt = trailingAuxdata(runtime, auxdatas);
    const cr = trailingAuxdata(creation, auxdatas);
    if (rt && cr) return { creation: [cr], runtime: [rt] };
  }
  const sources = Object.fromEntries(Object.entries(task.input.sources).map(([p, s]) => [p, { content: `${s.content} ` }]));
  const out = compileOnce(solc, { ...task.input, sources });
  const edited = out.contracts?.[task.target.path]?.[task.target.name];
  if (!edited) return { creation: [], runtime: [] };
  const editedAuxdatas = auxdatasInLegacyAssembly(edited.evm.legacyAssembly);
  return {
    creation: auxdataRegionsByDiff(creation, edited.evm.bytecode.object, auxdatas, editedAuxdatas),
    runtime: auxdataRegionsByDiff(runtime, edited.evm.deployedBytecode.object, auxdatas, editedAuxdatas),
  };
}

/** Compile the task's input and extract the target contract (runs on a compile worker). */
export function runCompile(task: CompileTask): CompileReply {
  let solc: Solc;
  try {
    solc = loadCompiler(task.compiler);
  } catch (err) {
    if (err instanceof CompilerLoadError) return { kind: 'compiler-error', message: err.message };
    throw err;
  }
  const out = compileOnce(solc, task.input);
  const errors = compileErrors(out);
  if (errors) return { kind: 'compile-error', message: errors };
  const c = out.contracts?.[task.target.path]?.[task.target.name];
  if (!c)
    return { kind: 'compile-error', message: `contract ${task.target.path}:${task.target.name} is not in the compiler output` };
  const creation = c.evm.bytecode.object.toLowerCase();
  const runtime = c.evm.deployedBytecode.object.toLowerCase();
  const auxdata = locateAuxdata(solc, task, creation, runtime, c.evm.legacyAssembly);
  return {
    kind: 'ok',
    contract: {
      abi: c.abi,
      metadata: c.metadata,
      creation: { object: creation, linkReferences: c.evm.bytecode.linkReferences ?? {}, auxdata: auxdata.creation },
      runtime: {
        object: runtime,
        linkReferences: c.evm.deployedBytecode.linkReferences ?? {},
        immutableReferences: c.evm.deployedBytecode.immutableReferences ?? {},
        auxdata: auxdata.runtime,
      },
    },
  };
}
