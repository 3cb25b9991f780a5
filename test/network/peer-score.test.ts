import test from 'ava';
import { DEFAULT_PEER_SCORE, PeerScores } from '../../ts/network/peer-score.js';

const MIN = 60_000;

function clock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_700_000_000_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

test('penalties decay: half after one half-life, nearly nothing after many', (t) => {
  const c = clock();
  const s = new PeerScores(DEFAULT_PEER_SCORE, c.now);
  s.penalize('a', 20);
  t.is(s.score('a'), -20);
  c.advance(DEFAULT_PEER_SCORE.halfLifeMs);
  t.is(Math.round(s.score('a')), -10);
  c.advance(10 * DEFAULT_PEER_SCORE.halfLifeMs);
  t.true(s.score('a') > -0.1);
  // Small offences spread over time never add up to a ban.
  for (let i = 0; i < 50; i++) {
    t.is(s.penalize('b', 10).bannedUntil, null);
    c.advance(DEFAULT_PEER_SCORE.halfLifeMs);
  }
  t.false(s.banned('b'));
});

test('a ban expires; a second ban of the same peer lasts twice as long', (t) => {
  const c = clock();
  const s = new PeerScores(DEFAULT_PEER_SCORE, c.now);
  const first = s.penalize('a', 50);
  t.is(first.bannedUntil, c.now() + 10 * MIN);
  t.true(s.banned('a'));
  c.advance(10 * MIN - 1);
  t.true(s.banned('a'));
  c.advance(1);
  t.false(s.banned('a'), 'the ban expired');
  const second = s.penalize('a', 50);
  t.is(second.bannedUntil, c.now() + 20 * MIN);
  c.advance(20 * MIN);
  t.false(s.banned('a'));
});

test('offences from one IP count against the IP: fresh peer ids are banned longer, then the IP is refused', (t) => {
  const c = clock();
  const s = new PeerScores(DEFAULT_PEER_SCORE, c.now);
  const bans: number[] = [];
  for (let i = 0; i < 9; i++) {
    const p = s.penalize(`fresh-${i}`, 50, '10.0.0.7');
    bans.push(((p.bannedUntil ?? 0) - c.now()) / MIN);
    t.false(s.ipBanned('10.0.0.7'), `after ${i + 1} offences`);
  }
  t.deepEqual(bans.slice(0, 4), [10, 20, 40, 80], 'each new key from the IP is banned twice as long');
  t.is(Math.max(...bans), 24 * 60, 'capped at a day');
  s.penalize('fresh-9', 50, '10.0.0.7');
  t.true(s.ipBanned('10.0.0.7'), 'ten offences: the IP is refused');
  t.false(s.ipBanned('10.0.0.8'), 'another IP is not');
  c.advance(DEFAULT_PEER_SCORE.halfLifeMs);
  t.false(s.ipBanned('10.0.0.7'), 'the IP ban decays with its penalties');
});
