export * from './context.js';
export * from './chain-queries.js';
export * from './account-queries.js';
export * from './tx-queries.js';
export * from './proof-queries.js';
export * from './eth-shapes.js';
