/**
 * Refused transactions in geth's words. ethers, viem, Hardhat and Foundry recognise a node's refusal by the
 * words geth uses ("nonce too low", "insufficient funds", "already known", ...) and turn it into a typed
 * error; our own wording ("Invalid nonce: expected 13, got 12") would reach the user as an unknown RPC error.
 * JSON-RPC messages therefore start with geth's words and keep our detail after them; the code stays the
 * spec's (-32603 for a mempool rejection). REST keeps the spec's exact messages: this is JSON-RPC only.
 */
import { RejectedTransactionError } from '../services/index.js';
import { InvalidParamsError, type NodeError } from '../util/index.js';
import { rpcCodeOf } from './error-codes.js';
import { RPC } from './types.js';

/** Our prefixes in front of the detail (ledger and admission wording). */
const OUR_PREFIX = /^(Invalid transaction|Invalid nonce|invalid raw transaction):\s*/;

/** `words: detail`, without repeating the words when the detail already starts with them. */
function withWords(words: string, detail: string): string {
  if (detail === '') return words;
  return detail.toLowerCase().startsWith(words) ? detail : `${words}: ${detail}`;
}

/** "expected 13, got 12" -> too low / too high. */
function nonceWords(detail: string): string | null {
  const m = /expected (\d+), got (\d+)/.exec(detail);
  if (!m) return null;
  return BigInt(m[2]) < BigInt(m[1]) ? 'nonce too low' : 'nonce too high';
}

function feeWords(detail: string): string {
  // An Ethereum transaction's fee cap below the base fee, else a native fee below MIN_TX_FEE.
  return /max fee per gas|base fee/i.test(detail) ? 'max fee per gas less than block base fee' : 'transaction underpriced';
}

function gasWords(detail: string): string | null {
  if (/intrinsic gas/i.test(detail)) return 'intrinsic gas too low';
  if (/block gas limit/i.test(detail)) return 'exceeds block gas limit';
  if (/transaction gas limit cap/i.test(detail)) return 'transaction gas limit too high';
  return null;
}

/**
 * geth's words for an admission refusal, from its reason and our message's detail; null when geth has no
 * such refusal (zero amount, data on a native transfer, malformed native transaction): our message stands.
 */
export function gethWords(reason: string, detail: string): string | null {
  switch (reason) {
    case 'nonce':
      return nonceWords(detail);
    case 'balance':
      return 'insufficient funds for gas * price + value';
    case 'duplicate':
      return 'already known';
    case 'replacement':
      return 'replacement transaction underpriced';
    case 'gas':
      return gasWords(detail);
    case 'fee':
      return feeWords(detail);
    case 'chain_id':
      return /replay-protected/i.test(detail)
        ? 'only replay-protected (EIP-155) transactions allowed over RPC'
        : 'invalid chain id for signer';
    case 'signature':
      return 'invalid sender';
    case 'sender_limit':
      return 'account limit exceeded';
    case 'pool_full':
      return 'txpool is full';
    default:
      return null;
  }
}

/** The detail after our prefix, without words that geth's replace ("insufficient balance", "invalid chain id"). */
function detailOf(message: string): string {
  return message
    .replace(OUR_PREFIX, '')
    .replace(/^insufficient balance:\s*/, '')
    .replace(/^invalid chain id:\s*/, '');
}

/** The JSON-RPC code and message of an error the dispatcher answers with. */
export function rpcErrorOf(err: NodeError): { code: number; message: string } {
  if (err instanceof RejectedTransactionError) {
    const detail = detailOf(err.message);
    const words = gethWords(err.reason, detail);
    return { code: rpcCodeOf(err), message: words === null ? err.message : withWords(words, detail) };
  }
  // EIP-3860 is enforced while decoding a raw transaction; it is a rule the transaction breaks, not bad input.
  if (err instanceof InvalidParamsError && /initcode size/i.test(err.message)) {
    return { code: RPC.internal, message: withWords('max initcode size exceeded', detailOf(err.message)) };
  }
  return { code: rpcCodeOf(err), message: err.message };
}
