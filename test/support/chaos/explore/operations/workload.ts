/**
 * Operations on the Deployment, as `kubectl` does them: a rolling update (a changed environment
 * variable), a rollout restart, a scale to zero and back, a node drain through the Eviction API
 * (the PodDisruptionBudget decides; kubectl drain retries a 429), and the leader's process killed
 * with SIGKILL (an OOM kill, a node crash), which the kubelet restarts.
 */
import { clone, type KubeObject } from '../../../../../local-cluster/fake-apiserver/index.js';
import { ApiError } from '../../../../../local-cluster/cluster/api-client.js';
import { sleep } from '../../../../../local-cluster/util/waits.js';
import { containerPid, isReady, NAME, NS, type World } from '../world.js';
import { scaled, type OperationContext } from './context.js';

const DEPLOYMENT = { resource: 'deployments', namespace: NS, name: NAME };
const RESTARTED_AT = 'kubectl.kubernetes.io/restartedAt';

const wantedReplicas = (world: World): number => Number((world.deployment()?.spec as { replicas?: number } | undefined)?.replicas ?? 0);

/** The Deployment rolled out: every wanted replica ready and of the newest template, nothing else left. */
export function settledProblem(world: World): string | undefined {
  const deployment = world.deployment();
  if (!deployment) return 'no Deployment';
  const status = (deployment.status ?? {}) as { observedGeneration?: number; updatedReplicas?: number; readyReplicas?: number; availableReplicas?: number };
  const wanted = wantedReplicas(world);
  const pods = world.pods();
  if ((status.observedGeneration ?? 0) < (deployment.metadata?.generation ?? 0)) return 'the Deployment controller has not seen the newest spec';
  if ((status.updatedReplicas ?? 0) !== wanted || (status.availableReplicas ?? 0) !== wanted) return `${status.updatedReplicas ?? 0} updated, ${status.availableReplicas ?? 0} available of ${wanted}`;
  if (pods.length !== wanted) return `${pods.length} Pods for ${wanted} replicas`;
  if (!pods.every((p) => isReady(p) && !p.metadata?.deletionTimestamp)) return 'a Pod is not ready or is going';
  return undefined;
}

export async function untilSettled(ctx: OperationContext, what: string): Promise<void> {
  await ctx.world.until(`${what}: the Deployment rolled out`, () => settledProblem(ctx.world) === undefined, ctx.sizes.waitMs, () => settledProblem(ctx.world) ?? '');
}

async function changeTemplate(ctx: OperationContext, change: (template: { metadata: { annotations?: Record<string, string> }; spec: { containers: { env?: { name: string; value?: string }[] }[] } }) => void): Promise<void> {
  const deployment = clone(ctx.world.deployment() as KubeObject);
  const template = (deployment.spec as { template: Parameters<typeof change>[0] }).template;
  change(template);
  await ctx.world.admin.update(DEPLOYMENT, deployment);
}

export async function rollingUpdate(ctx: OperationContext, revision: string): Promise<string> {
  await changeTemplate(ctx, (template) => {
    const container = template.spec.containers[0]!;
    container.env = [...(container.env ?? []).filter((e) => e.name !== 'CHAOS_REVISION'), { name: 'CHAOS_REVISION', value: revision }];
  });
  await untilSettled(ctx, 'rolling update');
  return `rolling update to CHAOS_REVISION=${revision} done`;
}

export async function rolloutRestart(ctx: OperationContext, afterNewPod?: (pod: string) => Promise<string>): Promise<string> {
  const before = new Set(ctx.world.pods().map((p) => p.metadata?.uid));
  await changeTemplate(ctx, (template) => {
    template.metadata.annotations = { ...template.metadata.annotations, [RESTARTED_AT]: new Date().toISOString() };
  });
  let during = '';
  if (afterNewPod) {
    await ctx.world.until('a new Pod of the restart', () => ctx.world.pods().some((p) => !before.has(p.metadata?.uid)), ctx.sizes.waitMs);
    const pod = ctx.world.pods().find((p) => !before.has(p.metadata?.uid))!;
    during = `; ${await afterNewPod(pod.metadata?.name ?? '')}`;
  }
  await untilSettled(ctx, 'rollout restart');
  return `rollout restart done${during}`;
}

/** Where each Pod left stands: `name: terminating for 12 s, container terminated (exit 0)`. */
export function podsLeft(world: World): string {
  return world
    .pods()
    .map((pod) => {
      // deletionTimestamp is when the grace period ends: the delete came that grace period before.
      const deleting = pod.metadata?.deletionTimestamp;
      const deletedAt = Date.parse(String(deleting)) - Number(pod.metadata?.deletionGracePeriodSeconds ?? 0) * 1000;
      const since = deleting ? `terminating for ${Math.round((Date.now() - deletedAt) / 1000)} s` : 'not deleted';
      const state = ((pod.status as { containerStatuses?: { state?: Record<string, { exitCode?: number; reason?: string }> }[] } | undefined)?.containerStatuses ?? [])[0]?.state ?? {};
      const [phase, facts] = Object.entries(state)[0] ?? ['no status', {}];
      const reason = facts.exitCode !== undefined ? `exit ${facts.exitCode}` : facts.reason;
      return `${pod.metadata?.name ?? ''}: ${since}, container ${phase}${reason ? ` (${reason})` : ''}`;
    })
    .join('; ');
}

/** `kubectl scale --replicas=0`, a hold, then back: scaled back even when the wait at zero gave up, as a person would. */
export async function scaleToZeroAndBack(ctx: OperationContext, holdMs: number): Promise<string> {
  const replicas = wantedReplicas(ctx.world);
  let gone = false;
  await ctx.world.admin.mergePatch(DEPLOYMENT, { spec: { replicas: 0 } });
  try {
    await ctx.world.until('scaled to zero: every Pod gone', () => ctx.world.pods().length === 0, ctx.sizes.waitMs, () => podsLeft(ctx.world));
    gone = ctx.world.store.get('validatingwebhookconfigurations', undefined, NAME) === undefined;
    await sleep(scaled(ctx, holdMs), ctx.world.signal);
  } finally {
    await ctx.world.admin.mergePatch(DEPLOYMENT, { spec: { replicas } });
  }
  await untilSettled(ctx, `scaled back to ${replicas}`);
  return `scaled to 0 (configurations ${gone ? 'deleted' : 'kept'}), held ${scaled(ctx, holdMs)} ms, back to ${replicas}`;
}

/** `kubectl drain`: every Pod of the node evicted at once, each retried while the budget says 429. */
export async function drainNode(ctx: OperationContext): Promise<string> {
  const pods = ctx.world.pods().filter((p) => !p.metadata?.deletionTimestamp);
  let refusals = 0;
  await Promise.all(
    pods.map(async (pod) => {
      const name = pod.metadata?.name ?? '';
      const uid = pod.metadata?.uid;
      const deadline = performance.now() + ctx.sizes.waitMs;
      for (;;) {
        try {
          await ctx.world.admin.createSubresource({ resource: 'pods', namespace: NS, name }, 'eviction', { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: NS } });
          break;
        } catch (error) {
          if (error instanceof ApiError && error.status === 404) break;
          if (!(error instanceof ApiError && (error.status === 429 || error.status === 503))) throw error;
          if (error.status === 429) refusals++;
          if (performance.now() > deadline) throw new Error(`drain: ${name} not evicted within ${ctx.sizes.waitMs} ms: ${error.message}`);
          await sleep(1000, ctx.world.signal);
        }
      }
      await ctx.world.until(`drain: ${name} gone`, () => !ctx.world.pods().some((p) => p.metadata?.uid === uid), ctx.sizes.waitMs);
    }),
  );
  await untilSettled(ctx, 'drain');
  return `drained ${pods.length} Pods (${refusals} evictions refused by the PodDisruptionBudget first)`;
}

const endpointReady = (world: World, ip: string): boolean =>
  world.store.list('endpointslices', NS).some((slice) => ((slice['endpoints'] as { addresses?: string[]; conditions?: { ready?: boolean } }[] | undefined) ?? []).some((e) => e.conditions?.ready === true && (e.addresses ?? []).includes(ip)));

/** SIGKILL to the Lease holder's process; the kubelet restarts the container (after its back-off). */
export async function leaderSigkill(ctx: OperationContext): Promise<string> {
  const holder = ctx.world.leaseHolder();
  const pod = ctx.world.pods().find((p) => p.metadata?.name === holder);
  const pid = pod ? containerPid(pod) : undefined;
  if (!pod || pid === undefined) return `no running leader to kill (the Lease names "${holder}")`;
  const ip = String((pod.status as { podIP?: string } | undefined)?.podIP ?? '');
  const window = { from: performance.now(), to: Number.POSITIVE_INFINITY };
  ctx.calls.sigkilled(window);
  ctx.processes.expectKill(pid);
  process.kill(pid, 'SIGKILL');
  // In flight, or routed to it before kube-proxy heard it went: those calls die with it.
  await ctx.world.until(`${holder} out of the Service`, () => !endpointReady(ctx.world, ip), ctx.sizes.waitMs).finally(() => {
    window.to = performance.now() + 1000;
  });
  await ctx.world.until(`${holder} restarted`, () => ctx.world.pods().some((p) => p.metadata?.name === holder && containerPid(p) !== undefined && containerPid(p) !== pid), ctx.sizes.waitMs);
  await untilSettled(ctx, 'after the SIGKILL');
  return `SIGKILL to the leader ${holder} (pid ${pid}); restarted by the kubelet`;
}
