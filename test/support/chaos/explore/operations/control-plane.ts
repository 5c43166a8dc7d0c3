/**
 * The control plane misbehaving: every kube-apiserver down (an outage, as in a control-plane
 * upgrade gone wrong), one kube-apiserver restarting (its caches and webhook connections lost), a
 * lag spike in one kube-apiserver's informer caches, and bursts of 429 (Retry-After) and 5xx
 * answers to the server's own requests (API Priority and Fairness shedding its flow, an etcd
 * hiccup). Down windows go to the call judge: a call whose kube-apiserver died under it is not
 * the webhook's failure.
 */
import { sleep } from '../../../../../local-cluster/util/waits.js';
import { SERVER_USER } from '../world.js';
import { scaled, type OperationContext } from './context.js';

export async function apiOutage(ctx: OperationContext, downMs: number): Promise<string> {
  const api = ctx.world.cluster.api;
  const window = { from: performance.now(), to: Number.POSITIVE_INFINITY };
  for (const apiserver of api.apiservers) ctx.calls.apiserverDown(apiserver.name, window);
  const answering = ctx.processes.apiRefusing();
  await api.close();
  try {
    await sleep(scaled(ctx, downMs), ctx.world.signal);
  } finally {
    await api.reopen();
    window.to = performance.now();
    answering();
  }
  return `API outage: every kube-apiserver down ${scaled(ctx, downMs)} ms`;
}

export async function apiserverRestart(ctx: OperationContext, index: number, downMs: number): Promise<string> {
  const apiserver = ctx.world.cluster.api.apiservers[index % ctx.world.cluster.api.apiservers.length]!;
  const window = { from: performance.now(), to: Number.POSITIVE_INFINITY };
  ctx.calls.apiserverDown(apiserver.name, window);
  try {
    await apiserver.restart({ downMs: scaled(ctx, downMs), signal: ctx.world.signal });
  } finally {
    window.to = performance.now();
  }
  return `${apiserver.name} restarted (down ${scaled(ctx, downMs)} ms, caches listed afresh)`;
}

export async function apiserverLagSpike(ctx: OperationContext, index: number, lagMs: number, durationMs: number): Promise<string> {
  const apiserver = ctx.world.cluster.api.apiservers[index % ctx.world.cluster.api.apiservers.length]!;
  apiserver.lagSpike(lagMs, scaled(ctx, durationMs));
  await sleep(scaled(ctx, durationMs), ctx.world.signal);
  await ctx.world.until(`${apiserver.name} caught up after its lag spike`, () => apiserver.backlog === 0, ctx.sizes.waitMs);
  return `${apiserver.name}: its caches ${lagMs} ms behind for ${scaled(ctx, durationMs)} ms`;
}

export async function apiErrors(ctx: OperationContext, kind: '429' | '5xx', holdMs: number, retryAfterSeconds: number): Promise<string> {
  const faults = ctx.world.cluster.api.faults;
  if (kind === '429') faults.add({ user: SERVER_USER }, { status: 429, retryAfterSeconds });
  else {
    faults.add({ user: SERVER_USER }, { status: 503, retryAfterSeconds }, { times: 5 });
    faults.add({ user: SERVER_USER }, { status: 500 });
  }
  const answering = ctx.processes.apiRefusing();
  try {
    await sleep(scaled(ctx, holdMs), ctx.world.signal);
  } finally {
    faults.clear();
    answering();
  }
  return kind === '429'
    ? `every request of the server answered 429 (Retry-After ${retryAfterSeconds} s) for ${scaled(ctx, holdMs)} ms`
    : `the server's requests answered 503 (Retry-After ${retryAfterSeconds} s) x5, then 500, for ${scaled(ctx, holdMs)} ms`;
}
