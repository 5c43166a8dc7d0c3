/**
 * A seeded schedule: the TLS mode, then a list of steps, each one workload operation with up to
 * three others (at most one per lane: policy, certificates, control plane) started at a drawn
 * moment inside it. Everything is drawn here, up front, so the seed names the schedule; the run
 * executes steps until its time is up (or `steps` of them), and the same seed and length replay
 * the same operations in the same order with the same parameters. (Process timing is not
 * replayed: the moments are relative to the step's start.)
 */
import { OPERATIONS, type Lane, type OperationName, type Params } from './operations/index.js';
import { Random } from './random.js';
import type { TlsMode } from './world.js';

export interface ScheduledOperation {
  name: OperationName;
  params: Params;
  /** For a side operation: ms after the step's start (at scale 1). */
  startMs: number;
}

export interface Step {
  index: number;
  workload: ScheduledOperation;
  side: ScheduledOperation[];
}

export interface Schedule {
  seed: number;
  mode: TlsMode;
  steps: Step[];
}

const SIDE_LANES: readonly Lane[] = ['policy', 'certificates', 'control-plane'];
/** Enough steps for hours; a run takes as many as its time allows. */
const STEPS_DRAWN = 400;

function drawFrom(random: Random, lane: Lane, mode: TlsMode): OperationName {
  const choices = (Object.entries(OPERATIONS) as [OperationName, (typeof OPERATIONS)[OperationName]][]).filter(([, op]) => op.lane === lane && op.modes.includes(mode));
  return random.weighted(choices.map(([name, op]) => [name, op.weight] as const));
}

export function drawSchedule(seed: number, mode?: TlsMode): Schedule {
  const random = new Random(seed);
  const drawnMode: TlsMode = random.pick(['generate', 'files'] as const);
  const chosenMode = mode ?? drawnMode;
  const int = (from: number, to: number): number => random.int(from, to);
  const steps: Step[] = [];
  for (let index = 0; index < STEPS_DRAWN; index++) {
    const name = drawFrom(random, 'workload', chosenMode);
    const workload = { name, params: OPERATIONS[name].draw(int), startMs: 0 };
    const side: ScheduledOperation[] = [];
    for (const lane of SIDE_LANES) {
      const wanted = random.chance(lane === 'control-plane' ? 0.6 : 0.45);
      // One policy write per step: a policy edit during a start already writes one.
      if (!wanted || (lane === 'policy' && name === 'policy-edit-during-start') || !SIDE_LANES.includes(lane)) continue;
      if (!Object.values(OPERATIONS).some((op) => op.lane === lane && op.modes.includes(chosenMode))) continue;
      const sideName = drawFrom(random, lane, chosenMode);
      side.push({ name: sideName, params: OPERATIONS[sideName].draw(int), startMs: int(0, 15_000) });
    }
    steps.push({ index, workload, side });
  }
  return { seed, mode: chosenMode, steps };
}

export const describe = (op: ScheduledOperation): string => `${op.name}${Object.keys(op.params).length > 0 ? ` ${JSON.stringify(op.params)}` : ''}`;
