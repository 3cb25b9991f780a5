import test from 'ava';
import { apiRequestHeaders } from '../../ts/api/index.js';

test('the API asks the HTTP layer for the headers its options read; behind trusted proxies for every header', (t) => {
  t.deepEqual(apiRequestHeaders({}), []);
  t.deepEqual(apiRequestHeaders({ corsOrigin: '*', apiKey: 'k'.repeat(16) }), ['origin', 'x-api-key']);
  // Repeated X-Forwarded-For lines must be joined and read from the right: only a full copy does that.
  t.is(apiRequestHeaders({ trustedProxies: ['10.0.0.0/8'] }), undefined);
});
