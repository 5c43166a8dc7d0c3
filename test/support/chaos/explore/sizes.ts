/**
 * The run's sizes at a scale: 1 is production's durations (API outages of 5-60 s, volumes
 * rewritten up to 40 s apart), CI runs at a fraction. The bounds are stated here and nowhere else.
 */
import type { RunOptions } from './run.js';

export function sizesAt(scale: number): Pick<RunOptions, 'scale' | 'volumeSyncMaxMs' | 'convergenceBoundMs' | 'waitMs'> {
  const volumeSyncMaxMs = Math.round(40_000 * scale);
  return {
    scale,
    volumeSyncMaxMs,
    // The slowest Pod's volume, then a leader's reload and pass; a new leader after a Lease expiry
    // (15 s); a rollout's Pods started under a loaded machine. Generous: a bound, not a target.
    convergenceBoundMs: volumeSyncMaxMs + 120_000,
    waitMs: 240_000,
  };
}
