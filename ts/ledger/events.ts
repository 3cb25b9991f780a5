/** Native events are defined with the native modules (ts/modules/kit/events.ts); the ledger re-exports them. */
export { type NativeEvent, eventsRlpItem, eventsFromRlpItem, encodeEvents, decodeEvents } from '../modules/index.js';
