/**
 * TEMPORARY (issue 24, section 1): presents a family not yet moved to ts/modules as a NativeModule, so the
 * executor has one dispatch table while tokens, staking and nft move one by one. Delete with the last user.
 */
import type { NativeModule, OperationCall, OperationTable } from '../modules/index.js';
import type { OperationModule } from './operation-context.js';
import { OPERATION_VARIANTS } from './operations.js';

export function fromLegacy(name: string, m: OperationModule, namespaces: readonly number[]): NativeModule {
  const operations: Record<string, (typeof OPERATION_VARIANTS)[keyof typeof OPERATION_VARIANTS]> = {};
  const handlers: Record<string, (call: OperationCall) => void> = {};
  for (const [op, spec] of Object.entries(OPERATION_VARIANTS)) {
    if (spec.family !== m.family) continue;
    operations[op] = spec;
    handlers[op] = (call) => m.apply(call as Parameters<OperationModule['apply']>[0]);
  }
  return {
    name,
    operations: operations as OperationTable,
    handlers: handlers as NativeModule['handlers'],
    namespaces,
    events: {},
    indexTerms: m.indexTerms,
    endBlock: m.endBlock,
    onDoubleSign: m.onDoubleSign,
    invariants: [],
  };
}
