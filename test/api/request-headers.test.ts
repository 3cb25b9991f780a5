import test from 'ava';
import { apiRequestHeaders } from '../../ts/api/index.js';

test('the API asks the HTTP layer for the headers its options read; behind trusted proxies for every header', (t) => {
  // If-None-Match always: immutable answers (ts/api/cache.ts) answer 304 to a matching one.
  t.deepEqual(apiRequestHeaders({}), ['if-none-match']);
  t.deepEqual(apiRequestHeaders({ corsOrigin: 'https://app.example', apiKey: 'k'.repeat(16) }), [
    'origin',
    'x-api-key',
    'if-none-match',
  ]);
  // A keys file (per-key quotas) reads X-API-Key too.
  t.deepEqual(apiRequestHeaders({ apiKeysFile: '/etc/native-node/keys.json' }), ['x-api-key', 'if-none-match']);
  // Any origin gets the same answer: Origin is not read.
  t.deepEqual(apiRequestHeaders({ corsOrigin: '*' }), ['if-none-match']);
  // Repeated X-Forwarded-For lines must be joined and read from the right: only a full copy does that.
  t.is(apiRequestHeaders({ trustedProxies: ['10.0.0.0/8'] }), undefined);
});
