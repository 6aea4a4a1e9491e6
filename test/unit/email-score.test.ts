import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  INVALID_SCORE_CAP,
  RISKY_SCORE_CAP,
  SCORE_WEIGHTS,
  computeScore,
  scoreSignals,
  type ScoreSignal,
  type ScoreSignals,
} from '#shared/email/validator/index';

const signalNames = SCORE_WEIGHTS.map((row) => row.signal);
const allSignals = (value: boolean) => Object.fromEntries(signalNames.map((name) => [name, value])) as ScoreSignals;

describe('SCORE_WEIGHTS', () => {
  it('is the table in the README, weight for weight, with its caps (the contract puts the formula there)', () => {
    // Given the README
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    // Then each signal has a row with its weight, and the caps are the code's
    for (const row of SCORE_WEIGHTS)
      expect(readme, row.signal).toMatch(new RegExp(`^\\| \`${row.signal}\`[^|\\n]*\\| ${row.points} \\|$`, 'm'));
    expect(readme).toContain(`capped at ${INVALID_SCORE_CAP} when the domain`);
    expect(readme).toContain(`at ${RISKY_SCORE_CAP} when it is \`risky\``);
  });

  it('adds up to 100 with unique, described signals', () => {
    expect(SCORE_WEIGHTS.reduce((sum, row) => sum + row.points, 0)).toBe(100);
    expect(new Set(signalNames).size).toBe(signalNames.length);
    for (const row of SCORE_WEIGHTS) {
      expect(row.points).toBeGreaterThan(0);
      expect(row.description.length).toBeGreaterThan(10);
    }
  });

  it('scores 100 with every signal and 0 with none', () => {
    expect(computeScore(allSignals(true))).toBe(100);
    expect(computeScore(allSignals(false))).toBe(0);
  });

  // Every row is exercised: losing exactly that signal costs exactly its points
  // (accepts_mail also brings the invalid cap into play).
  it.each(SCORE_WEIGHTS.map((row) => [row.signal, row.points] as const))('%s is worth %i points', (signal, points) => {
    const without = { ...allSignals(true), [signal]: false };
    const expected = signal === 'accepts_mail' ? Math.min(100 - points, INVALID_SCORE_CAP) : 100 - points;
    expect(computeScore(without)).toBe(expected);
    // And alone on top of a mail-accepting domain (or alone at all, for accepts_mail):
    const alone = { ...allSignals(false), accepts_mail: true, [signal]: true };
    expect(computeScore(alone)).toBe(signal === 'accepts_mail' ? points : SCORE_WEIGHTS[0].points + points);
  });

  it('caps a domain that does not accept mail', () => {
    expect(computeScore({ ...allSignals(true), accepts_mail: false })).toBe(INVALID_SCORE_CAP);
    expect(INVALID_SCORE_CAP).toBeLessThanOrEqual(10);
  });

  it('is monotonic: gaining any signal never lowers the score', () => {
    // All 2^n combinations.
    const n = signalNames.length;
    for (let mask = 0; mask < 1 << n; mask++) {
      const signals = Object.fromEntries(signalNames.map((name, i) => [name, Boolean(mask & (1 << i))])) as ScoreSignals;
      const score = computeScore(signals);
      expect(Number.isInteger(score) && score >= 0 && score <= 100).toBe(true);
      for (const name of signalNames) {
        if (!signals[name]) expect(computeScore({ ...signals, [name]: true })).toBeGreaterThanOrEqual(score);
      }
    }
  });
});

describe('scoreSignals', () => {
  const good = {
    is_valid: true,
    mx_record_count: 2,
    connectable_mx_record_count: 2,
    can_connect: true,
    is_username_generic: false,
    is_alias: false,
    is_disposable: false,
  };

  it('derives every signal from the result fields', () => {
    expect(scoreSignals(good)).toEqual(allSignals(true));
    const flips: [Partial<typeof good>, ScoreSignal[]][] = [
      [{ is_valid: false }, ['accepts_mail', 'has_mx_records']],
      [{ mx_record_count: 0, connectable_mx_record_count: 0 }, ['has_mx_records']], // implicit MX, domain host connectable
      [{ connectable_mx_record_count: 1 }, ['all_hosts_connectable']],
      [{ can_connect: false, connectable_mx_record_count: 0 }, ['can_connect', 'all_hosts_connectable']],
      [{ is_disposable: true }, ['not_disposable']],
      [{ is_username_generic: true }, ['not_role_account']],
      [{ is_alias: true }, ['not_alias']],
    ];
    const covered = new Set<ScoreSignal>();
    for (const [change, lost] of flips) {
      const signals = scoreSignals({ ...good, ...change });
      expect(signalNames.filter((name) => !signals[name]).sort()).toEqual([...lost].sort());
      lost.forEach((name) => covered.add(name));
    }
    expect([...covered].sort()).toEqual([...signalNames].sort());
  });
});
