/**
 * The catalogue: each operation platform teams perform, the lane it runs in, the TLS modes it
 * applies to, and how it runs with the parameters the schedule drew for it.
 */
import type { TlsMode } from '../world.js';
import type { OperationContext } from './context.js';
import { caStartOver, newCaKey, reissueServingCertificate } from './certificates.js';
import { apiErrors, apiOutage, apiserverLagSpike, apiserverRestart } from './control-plane.js';
import { writePolicy } from './policy.js';
import { drainNode, leaderSigkill, rollingUpdate, rolloutRestart, scaleToZeroAndBack } from './workload.js';

export type OperationName =
  | 'rolling-update'
  | 'rollout-restart'
  | 'ca-start-over'
  | 'policy-edit-during-start'
  | 'scale-to-zero-and-back'
  | 'node-drain'
  | 'leader-sigkill'
  | 'idle'
  | 'policy-edit'
  | 'rule-rename'
  | 'rule-removal'
  | 'cert-manager-reissue'
  | 'cert-manager-new-ca-key'
  | 'api-outage'
  | 'api-429-burst'
  | 'api-5xx-burst'
  | 'apiserver-lag-spike'
  | 'apiserver-restart';

/** Workload operations run one per step; the others start at a drawn moment within it, one per lane. */
export type Lane = 'workload' | 'policy' | 'certificates' | 'control-plane';

/** The parameters the schedule drew (durations at scale 1, in ms). */
export type Params = Record<string, number>;

export interface OperationDefinition {
  lane: Lane;
  modes: readonly TlsMode[];
  /** How often the schedule draws it, relative to the others of its lane. */
  weight: number;
  /** Draws the parameters: `int(from, to)` from the run's generator. */
  draw(int: (from: number, to: number) => number): Params;
  run(ctx: OperationContext, params: Params): Promise<string>;
  /** What it holds on purpose (ms at scale 1: an outage, a hold at zero); its bound is the run's wait bound plus this. */
  heldMs?(params: Params): number;
}

const BOTH: readonly TlsMode[] = ['generate', 'files'];

export const OPERATIONS: Record<OperationName, OperationDefinition> = {
  'rolling-update': { lane: 'workload', modes: BOTH, weight: 2, draw: (int) => ({ revision: int(1, 1_000_000) }), run: (ctx, p) => rollingUpdate(ctx, String(p['revision'])) },
  'rollout-restart': { lane: 'workload', modes: BOTH, weight: 2, draw: () => ({}), run: (ctx) => rolloutRestart(ctx) },
  'ca-start-over': { lane: 'workload', modes: ['generate'], weight: 2, draw: () => ({}), run: (ctx) => caStartOver(ctx) },
  'policy-edit-during-start': {
    lane: 'workload',
    modes: BOTH,
    weight: 2,
    // The edit lands this long after the restart's first new Pod was created: during its start.
    draw: (int) => ({ afterMs: int(0, 4000), seed: int(0, 2 ** 31 - 1) }),
    heldMs: (p) => p['afterMs']!,
    run: (ctx, p) =>
      rolloutRestart(ctx, async (pod) => {
        await new Promise((resolve) => setTimeout(resolve, p['afterMs']));
        return `${await writePolicy(ctx, 'edit', p['seed']!)} ${p['afterMs']} ms after ${pod} was created`;
      }),
  },
  'scale-to-zero-and-back': { lane: 'workload', modes: BOTH, weight: 1, draw: (int) => ({ holdMs: int(2000, 20_000) }), heldMs: (p) => p['holdMs']!, run: (ctx, p) => scaleToZeroAndBack(ctx, p['holdMs']!) },
  'node-drain': { lane: 'workload', modes: BOTH, weight: 2, draw: () => ({}), run: (ctx) => drainNode(ctx) },
  'leader-sigkill': { lane: 'workload', modes: BOTH, weight: 2, draw: () => ({}), run: (ctx) => leaderSigkill(ctx) },
  idle: { lane: 'workload', modes: BOTH, weight: 1, draw: (int) => ({ ms: int(5000, 20_000) }), heldMs: (p) => p['ms']!, run: async (ctx, p) => {
    await new Promise((resolve) => setTimeout(resolve, Math.round(p['ms']! * ctx.sizes.scale)));
    return 'nothing but the load';
  } },
  'policy-edit': { lane: 'policy', modes: BOTH, weight: 3, draw: (int) => ({ seed: int(0, 2 ** 31 - 1) }), run: (ctx, p) => writePolicy(ctx, 'edit', p['seed']!) },
  'rule-rename': { lane: 'policy', modes: BOTH, weight: 2, draw: (int) => ({ seed: int(0, 2 ** 31 - 1) }), run: (ctx, p) => writePolicy(ctx, 'rename', p['seed']!) },
  'rule-removal': { lane: 'policy', modes: BOTH, weight: 1, draw: (int) => ({ seed: int(0, 2 ** 31 - 1) }), run: (ctx, p) => writePolicy(ctx, 'removal', p['seed']!) },
  'cert-manager-reissue': { lane: 'certificates', modes: ['files'], weight: 2, draw: () => ({}), run: (ctx) => reissueServingCertificate(ctx) },
  'cert-manager-new-ca-key': { lane: 'certificates', modes: ['files'], weight: 1, draw: () => ({}), run: (ctx) => newCaKey(ctx) },
  'api-outage': { lane: 'control-plane', modes: BOTH, weight: 1, draw: (int) => ({ downMs: int(5000, 60_000) }), heldMs: (p) => p['downMs']!, run: (ctx, p) => apiOutage(ctx, p['downMs']!) },
  'api-429-burst': { lane: 'control-plane', modes: BOTH, weight: 1, draw: (int) => ({ holdMs: int(2000, 15_000), retryAfter: int(1, 5) }), heldMs: (p) => p['holdMs']!, run: (ctx, p) => apiErrors(ctx, '429', p['holdMs']!, p['retryAfter']!) },
  'api-5xx-burst': { lane: 'control-plane', modes: BOTH, weight: 1, draw: (int) => ({ holdMs: int(2000, 15_000), retryAfter: int(1, 3) }), heldMs: (p) => p['holdMs']!, run: (ctx, p) => apiErrors(ctx, '5xx', p['holdMs']!, p['retryAfter']!) },
  'apiserver-lag-spike': {
    lane: 'control-plane',
    modes: BOTH,
    weight: 2,
    draw: (int) => ({ apiserver: int(0, 2), lagMs: int(1000, 5000), durationMs: int(5000, 30_000) }),
    heldMs: (p) => p['durationMs']!,
    run: (ctx, p) => apiserverLagSpike(ctx, p['apiserver']!, p['lagMs']!, p['durationMs']!),
  },
  'apiserver-restart': { lane: 'control-plane', modes: BOTH, weight: 2, draw: (int) => ({ apiserver: int(0, 2), downMs: int(1000, 15_000) }), heldMs: (p) => p['downMs']!, run: (ctx, p) => apiserverRestart(ctx, p['apiserver']!, p['downMs']!) },
};
