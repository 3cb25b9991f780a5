/**
 * The door of ts/events/: the node's event feed (finalized blocks, admitted transactions, rollbacks), the
 * subscriptions on it (live, and resumable from a stored height), the installed filters of eth_newFilter and
 * friends, and the log matching they share with eth_getLogs. Push transports (WebSocket, gRPC streams) and the
 * polled filters read from here; ts/node builds the feed and the registry. docs/architecture.md.
 */
export {
  type ChainEvent,
  type ChainEventKind,
  type ChainEventListener,
  ChainEventFeed,
  type SubscriptionItem,
  ChainSubscription,
} from './chain-events.js';
export { REPLAY_CHUNK, type ResumableOptions, ResumableSubscription, subscribeResumable } from './event-replay.js';
export {
  FILTER_TIMEOUT_MS,
  MAX_FILTERS_PER_CLIENT,
  MAX_FILTER_QUEUE,
  type FilterKind,
  type FilterBound,
  type LogCriteria,
  type FilterChanges,
  FilterNotFoundError,
  TooManyFiltersError,
  type FilterOptions,
  inFilterRange,
  blockLogs,
  eventReceipts,
  FilterRegistry,
} from './filters.js';
export { type LogFilter, type FoundLog, type LocatedReceipt, locateReceipts, logMatches, matchingLogs } from './log-match.js';
