/**
 * Verification failures as named classes carrying their HTTP status and Sourcify's error code (API v2
 * `customCode`), so the v1 (`{ error }`) and v2 (`{ customCode, message, errorId }`) answers are made in one
 * place (routes.ts).
 */
export class VerifyError extends Error {
  constructor(
    message: string,
    readonly httpStatus: number,
    readonly code: string,
    /** Extra fields of the v1 answer (e.g. the contracts to choose from). */
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** A malformed request: missing fields, bad JSON, an invalid address (400). */
export class InvalidVerifyRequestError extends VerifyError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(message, 400, 'invalid_parameter', details);
  }
}

/** Only chains 7119 and 7120 are served (spec: verification chains). */
export class UnsupportedChainError extends VerifyError {
  constructor(chain: string, served: readonly number[]) {
    const serves = served.length ? `chain ${served.join(' and ')}` : 'no chain (chains 7119 and 7120 only)';
    super(`chain ${chain} is not supported: this verifier serves ${serves}`, 400, 'unsupported_chain');
  }
}

/** Sources named by the metadata are missing from the request (Sourcify answers 400). */
export class MissingSourcesError extends VerifyError {
  constructor(missing: readonly string[]) {
    super(
      `missing sources: ${missing.join(', ')} (each source the metadata lists must be sent, matched by its keccak256)`,
      400,
      'missing_source',
    );
  }
}

/** No contract at the address (spec: bytecode cannot be fetched, 500). */
export class NoCodeError extends VerifyError {
  constructor(chainId: number, address: string) {
    super(`chain ${chainId} does not have a contract deployed at ${address}`, 500, 'contract_not_deployed');
  }
}

/** The sources do not compile; the message carries the compiler's errors. */
export class CompilationFailedError extends VerifyError {
  constructor(compilerMessage: string) {
    super(`compilation failed: ${compilerMessage}`, 500, 'compiler_error');
  }
}

/** The metadata names a compiler this verifier does not have. */
export class CompilerNotAvailableError extends VerifyError {
  constructor(message: string) {
    super(message, 500, 'unsupported_compiler_version');
  }
}

/** The compiler ran past its time or memory limit (its worker was stopped). */
export class CompilationLimitError extends VerifyError {
  constructor(message: string) {
    super(message, 500, 'compilation_limit');
  }
}

/** Every compile worker is busy and the queue is full. */
export class VerifierBusyError extends VerifyError {
  constructor(capacity: number) {
    super(`too many verifications in progress (${capacity} running or queued); try again later`, 503, 'verifier_busy');
  }
}

/** The recompiled runtime code differs from the deployed code beyond the metadata (spec: bytecode mismatch). */
export class BytecodeMismatchError extends VerifyError {
  constructor(
    readonly offset: number,
    recompiledLength: number,
    deployedLength: number,
  ) {
    const lengths =
      recompiledLength === deployedLength
        ? `both ${deployedLength} bytes`
        : `recompiled ${recompiledLength} bytes, deployed ${deployedLength} bytes`;
    super(
      `the deployed and recompiled bytecode don't match: first difference at byte offset ${offset} of the runtime code (${lengths})`,
      500,
      'no_match',
    );
  }
}

/** A partial match when the contract already has one: Sourcify keeps the first and answers 409. */
export class AlreadyPartialError extends VerifyError {
  constructor(chainId: number, address: string) {
    super(
      `the contract ${address} on chain ${chainId} is already partially verified; the new sources also gave a partial match and were not stored (only a perfect match replaces a partial one)`,
      409,
      'already_verified',
    );
  }
}

/** API v2: the contract already has exact runtime and creation matches. */
export class AlreadyVerifiedError extends VerifyError {
  constructor(chainId: number, address: string) {
    super(
      `contract ${address} on chain ${chainId} is already verified with exact runtime and creation matches`,
      409,
      'already_verified',
    );
  }
}

/** A lookup of something not verified or not known (404). */
export class NotVerifiedError extends VerifyError {
  constructor(message = 'Files have not been found!', code = 'not_found') {
    super(message, 404, code);
  }
}
