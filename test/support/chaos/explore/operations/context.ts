/** What every operation gets: the world, the policy history, the judges it tells about its kills and outages, and the run's sizes. */
import type { CallJudge } from '../invariants/calls.js';
import type { ProcessJudge } from '../invariants/processes.js';
import type { PolicyHistory } from '../policy-history.js';
import type { World } from '../world.js';

export interface Sizes {
  /** Multiplies every duration drawn from a production range (1 for exploration, less in CI). */
  scale: number;
  /** Bound for each wait inside an operation (a rollout, an eviction, a reissue). */
  waitMs: number;
}

export interface OperationContext {
  world: World;
  history: PolicyHistory;
  calls: CallJudge;
  processes: ProcessJudge;
  sizes: Sizes;
}

/** A duration drawn by the schedule (ms at scale 1), scaled for this run. */
export const scaled = (ctx: OperationContext, ms: number): number => Math.max(100, Math.round(ms * ctx.sizes.scale));
