/**
 * The faults, each a step that starts, holds and ends one disturbance: the API slow, hanging,
 * failing with 5xx or 409, restarting; certificate rotations; replica restarts and the leader's
 * SIGTERM or SIGKILL. A stopped replica is replaced before the step ends, as the ReplicaSet would.
 */
import { sleep } from '../../../local-cluster/util/waits.js';
import type { BundleExpectation } from './rotator.js';
import type { ChaosCluster } from './cluster.js';
import { tamperWithValidating } from './invariants.js';

export type FaultName =
  | 'api-latency'
  | 'api-hang'
  | 'api-5xx'
  | 'api-409'
  | 'api-restart'
  | 'leaf-renewal'
  | 'ca-rollover'
  | 'follower-restart'
  | 'leader-sigterm'
  | 'leader-sigkill';

export interface FaultSizes {
  /** How long an API fault lasts. */
  holdMs: number;
  /** How long the API is down in a restart. */
  downMs: number;
  /** Added to every API request while api-latency holds. */
  latencyMs: number;
  /** Bound for the waits inside a step (a new leader, a served certificate). */
  waitMs: number;
}

export interface FaultContext {
  cluster: ChaosCluster;
  sizes: FaultSizes;
  signal: AbortSignal;
  /** Resolves once the registered caBundle meets the expectation. */
  bundleRegistered(expected: BundleExpectation): Promise<void>;
}

/** What a step did, for the report. */
export interface FaultDetail {
  note: string;
}

async function holdApiFault(ctx: FaultContext, add: () => void, note: string): Promise<FaultDetail> {
  add();
  try {
    await sleep(ctx.sizes.holdMs, ctx.signal);
  } finally {
    ctx.cluster.api.faults.clear();
  }
  return { note };
}

/**
 * A replica goes away by `signal` and a new Pod starts in its place; the next steps run while it
 * starts (so it may start during an API fault), and the steps that need it wait for it.
 */
async function replace(ctx: FaultContext, choose: () => string | undefined, signal: 'SIGTERM' | 'SIGKILL'): Promise<FaultDetail> {
  await ctx.cluster.settle();
  const podName = choose();
  if (!podName) throw new Error(`no replica to send ${signal} to`);
  const stopped = await ctx.cluster.stopReplica(podName, signal);
  ctx.cluster.replaceInBackground();
  return { note: `${podName}${stopped.wasLeader ? ' (leader)' : ''} ${signal}: exit ${stopped.code ?? 'by the signal'} after ${stopped.ms} ms; a new Pod started` };
}

const aFollower = (cluster: ChaosCluster): string | undefined => cluster.live('registering').find((pod) => pod !== cluster.leader());

export const FAULTS: Record<FaultName, (ctx: FaultContext) => Promise<FaultDetail>> = {
  'api-latency': (ctx) => holdApiFault(ctx, () => ctx.cluster.api.faults.add({}, { latencyMs: ctx.sizes.latencyMs }), `+${ctx.sizes.latencyMs} ms on every API request for ${ctx.sizes.holdMs} ms`),
  'api-hang': (ctx) => holdApiFault(ctx, () => ctx.cluster.api.faults.add({}, { hang: true }), `every new API request hangs for ${ctx.sizes.holdMs} ms`),
  'api-5xx': (ctx) =>
    holdApiFault(
      ctx,
      () => {
        ctx.cluster.api.faults.add({}, { status: 503, retryAfterSeconds: 1 }, { times: 10 });
        ctx.cluster.api.faults.add({}, { status: 500 });
        tamperWithValidating(ctx.cluster.api.store);
      },
      `10 x 503 with Retry-After, then 500 on every API request for ${ctx.sizes.holdMs} ms; the validating configuration edited meanwhile`,
    ),
  'api-409': (ctx) =>
    holdApiFault(
      ctx,
      () => {
        ctx.cluster.api.faults.add({ verb: 'update' }, { conflict: true });
        tamperWithValidating(ctx.cluster.api.store);
      },
      `409 Conflict on every update (configurations and the Lease) for ${ctx.sizes.holdMs} ms; the validating configuration edited meanwhile`,
    ),
  'api-restart': async (ctx) => {
    await ctx.cluster.api.close();
    try {
      await sleep(ctx.sizes.downMs, ctx.signal);
    } finally {
      await ctx.cluster.api.reopen();
    }
    return { note: `API down ${ctx.sizes.downMs} ms (connections refused, watches cut), back on the same port and store` };
  },
  'leaf-renewal': async (ctx) => {
    await ctx.cluster.rotator.renewLeaf({ servingPorts: () => ctx.cluster.ports() }, ctx.sizes.waitMs);
    return { note: 'new leaf from the same CA in every volume, served by every replica' };
  },
  'ca-rollover': async (ctx) => {
    await ctx.cluster.rotator.rollCa({ bundleRegistered: ctx.bundleRegistered, servingPorts: () => ctx.cluster.ports() }, ctx.sizes.waitMs);
    return { note: 'new CA: bundle old+new registered, leaves re-issued and served, old CA dropped' };
  },
  'follower-restart': (ctx) => replace(ctx, () => aFollower(ctx.cluster), 'SIGTERM'),
  'leader-sigterm': (ctx) => replace(ctx, () => ctx.cluster.leader(), 'SIGTERM'),
  'leader-sigkill': (ctx) => replace(ctx, () => ctx.cluster.leader(), 'SIGKILL'),
};
