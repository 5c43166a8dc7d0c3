/**
 * Fault schedules: a list of rounds, each a list of steps run one after another; a step is one
 * fault or several run at the same time. The convergence check runs after every step.
 */
import type { FaultName } from './faults.js';

export type Step = FaultName | readonly FaultName[];

export interface Round {
  steps: Step[];
  /** The round lasts at least this long: the load keeps running after its last step. */
  minMs: number;
}

/**
 * The CI-sized run: every fault once; rotations overlap the slow and conflicting API, and the
 * replacement Pods start while the API fails.
 */
export function ciSchedule(): Round[] {
  return [
    {
      minMs: 0,
      steps: [
        'follower-restart',
        ['api-latency', 'leaf-renewal'],
        ['api-5xx', 'ca-rollover'],
        'leader-sigterm',
        'api-409',
        'api-hang',
        'leader-sigkill',
        'api-restart',
      ],
    },
  ];
}

export interface SoakSize {
  minutes: number;
  rounds: number;
  rotations: number;
}

/**
 * `rounds` rounds filling `minutes`: each has one API outage (a restart), one leader change (SIGTERM
 * and SIGKILL in turn), a follower restart, the slow, hanging, 5xx and 409 API, and its share of
 * the rotations (a CA rollover in every round, leaf renewals for the rest).
 */
export function soakSchedule(size: SoakSize): Round[] {
  const rounds: Round[] = [];
  const perRound = Math.ceil(size.rotations / size.rounds);
  let rotationsLeft = size.rotations;
  for (let round = 0; round < size.rounds; round++) {
    const rotations = Math.min(perRound, rotationsLeft);
    rotationsLeft -= rotations;
    const renewals: FaultName[] = Array.from({ length: Math.max(0, rotations - 1) }, () => 'leaf-renewal');
    const rollover: FaultName[] = rotations > 0 ? ['ca-rollover'] : [];
    const leaderChange: FaultName = round % 2 === 0 ? 'leader-sigterm' : 'leader-sigkill';
    rounds.push({
      minMs: (size.minutes * 60_000) / size.rounds,
      steps: [
        renewals[0] ? ['api-latency', renewals[0]] : 'api-latency',
        'api-restart',
        ...renewals.slice(1, 2),
        leaderChange,
        ['api-5xx', ...rollover],
        'api-hang',
        'follower-restart',
        ...renewals.slice(2),
        'api-409',
      ],
    });
  }
  return rounds;
}

export const stepName = (step: Step): string => (typeof step === 'string' ? step : step.join(' + '));
export const faultsOf = (step: Step): readonly FaultName[] => (typeof step === 'string' ? [step] : step);
