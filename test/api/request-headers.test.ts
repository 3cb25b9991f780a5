import test from 'ava';
import { apiRequestHeaders } from '../../ts/api/index.js';

test('the API asks the HTTP layer for the headers its options read; behind trusted proxies for every header', (t) => {
  t.deepEqual(apiRequestHeaders({}), []);
  t.deepEqual(apiRequestHeaders({ corsOrigin: 'https://app.example', apiKey: 'k'.repeat(16) }), ['origin', 'x-api-key']);
  // Any origin gets the same answer: Origin is not read.
  t.deepEqual(apiRequestHeaders({ corsOrigin: '*' }), []);
  // Repeated X-Forwarded-For lines must be joined and read from the right: only a full copy does that.
  t.is(apiRequestHeaders({ trustedProxies: ['10.0.0.0/8'] }), undefined);
});
