/**
 * SRC-20 events (names unique across modules) and the index terms the feeds read: `token:<contract>` lists
 * a token's balance movements (deploy, transfers, mints, burns: the transfer feeds); `token-account:<address>`
 * the balance movements an address takes part in (the explorer's SRC-20 transfers tab of an address, as
 * Blockscout and Etherscan show it). Approvals are not listed: no feed shows them (their receipts keep them).
 * The account terms cost two postings per transfer in the commit, not in execution (docs/tokens-and-staking.md).
 */
import type { NativeEvent } from '../kit/events.js';

export const TOKEN_EVENTS = {
  deploy: 'TokenDeploy',
  transfer: 'TokenTransfer',
  mint: 'TokenMint',
  burn: 'TokenBurn',
  approval: 'TokenApproval',
} as const;

export const tokenContractTerm = (contract: string): string => `token:${contract}`;
export const tokenAccountTerm = (address: string): string => `token-account:${address}`;

export function tokenIndexTerms(e: NativeEvent): string[] {
  const f = e.fields;
  switch (e.type) {
    case TOKEN_EVENTS.deploy:
      return [tokenContractTerm(f.contract), tokenAccountTerm(f.deployer)];
    case TOKEN_EVENTS.transfer:
      return [tokenContractTerm(f.contract), tokenAccountTerm(f.from), tokenAccountTerm(f.to)];
    case TOKEN_EVENTS.mint:
      return [tokenContractTerm(f.contract), tokenAccountTerm(f.to)];
    case TOKEN_EVENTS.burn:
      return [tokenContractTerm(f.contract), tokenAccountTerm(f.from)];
    default:
      return [];
  }
}
