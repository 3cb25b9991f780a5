/** Points an invalid message costs its sender by default (malformed, forged or invalid: dropped at once). */
export const INVALID_MESSAGE_PENALTY = 50;

/** A message was invalid; the sender is scored down (oversized, undecodable, invalid block or transaction). */
export class PeerMisbehaviour extends Error {
  constructor(
    message: string,
    readonly penalty = INVALID_MESSAGE_PENALTY,
  ) {
    super(message);
  }
}

/**
 * A message that cannot be judged now or is of no use (gossipsub IGNORE): not relayed, the sender not
 * penalized (a block more than one height above the head, for instance).
 */
export class IgnoredMessage extends Error {}
