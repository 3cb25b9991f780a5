/** BFT round timeouts grow per round, up to a cap (issue 29, "Liveness under overload"). */
import test from 'ava';
import { MAX_TIMEOUT_GROWTH_ROUNDS, roundTimeout, roundTimeouts } from '../../ts/consensus/bft-options.js';

test('round timeouts grow per round and stop growing after the cap', (t) => {
  const { proposeMs, voteMs, deltaMs } = roundTimeouts(1000);
  t.deepEqual([proposeMs, voteMs, deltaMs], [3000, 1000, 500], "CometBFT's defaults at 1 s blocks");
  t.is(roundTimeout(proposeMs, deltaMs, 0), 3000);
  t.is(roundTimeout(proposeMs, deltaMs, 4), 5000);
  const capped = roundTimeout(proposeMs, deltaMs, MAX_TIMEOUT_GROWTH_ROUNDS);
  t.is(capped, 3000 + 500 * MAX_TIMEOUT_GROWTH_ROUNDS);
  for (const r of [MAX_TIMEOUT_GROWTH_ROUNDS + 1, 50, 10_000]) t.is(roundTimeout(proposeMs, deltaMs, r), capped, `round ${r}`);
  t.is(roundTimeout(voteMs, deltaMs, 1_000_000), 1000 + 500 * MAX_TIMEOUT_GROWTH_ROUNDS);
});
