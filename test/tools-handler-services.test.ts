import t from 'tap';
import { Writable } from 'node:stream';
import pino from 'pino';
import { Registry } from 'prom-client';
import { admissionRequest, defineValidatingWebhook, reviewWebhook, WebhookDefinitionError, type k8s } from '../src/index.js';
import { LOG_BASE } from '../src/lifecycle/logger.js';
import { readLogLine } from './support/logs/log-lines.js';

const pod: k8s.V1Pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'web', namespace: 'shop' }, spec: { containers: [{ name: 'web', image: 'nginx:latest' }] } };

function capture(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(readLogLine(chunk.toString(), 'reviewWebhook') ?? JSON.parse(chunk.toString())), done()) });
  return { logger: pino({ level: 'debug', base: LOG_BASE }, sink), lines };
}

t.test('context.log: every line carries the review uid and the webhook name', async (t) => {
  const logging = defineValidatingWebhook({
    name: 'logging',
    kind: 'Pod',
    handler: (request, context) => {
      context.log.info({ image: request.object?.spec?.containers[0]?.image }, 'looked at the image');
      context.log.child({ step: 'two' }).debug('second line');
      return { allowed: true };
    },
  });
  const { logger, lines } = capture();
  await reviewWebhook(logging, admissionRequest(pod, { uid: 'review-1' }), { logger });
  const own = lines.filter((l) => l['msg'] !== 'admission review');
  t.match(own, [
    { uid: 'review-1', webhook: 'logging', image: 'nginx:latest', msg: 'looked at the image', level: 30 },
    { uid: 'review-1', webhook: 'logging', step: 'two', msg: 'second line', level: 20 },
  ]);
  t.ok(lines.some((l) => l['msg'] === 'admission review' && l['uid'] === 'review-1'), "the server's own review line goes to the same logger");
});

t.test('context.metrics: get-or-create on the registry; conflicts and server names are refused', async (t) => {
  const registry = new Registry();
  let conflict: unknown;
  const counting = defineValidatingWebhook({
    name: 'counting',
    kind: 'Pod',
    handler: (request, context) => {
      context.metrics.counter({ name: 'team_pods_seen_total', help: 'Pods seen.', labelNames: ['namespace'] }).inc({ namespace: request.namespace ?? '' });
      context.metrics.histogram({ name: 'team_containers', help: 'Containers per pod.', buckets: [1, 2, 5] }).observe(request.object?.spec?.containers.length ?? 0);
      try {
        context.metrics.gauge({ name: 'team_pods_seen_total', help: 'x' });
      } catch (error) {
        conflict = error;
      }
      return { allowed: true };
    },
  });
  await reviewWebhook(counting, admissionRequest(pod), { metricsRegistry: registry });
  await reviewWebhook(counting, admissionRequest(pod), { metricsRegistry: registry });
  const text = await registry.metrics();
  t.match(text, /\nteam_pods_seen_total\{namespace="shop"\} 2\n/, 'the same counter both times');
  t.match(text, /\nteam_containers_bucket\{le="1"\} 2\n/);
  t.match(String(conflict), /exists as a counter with labels \[namespace\]; asked for a gauge/);

  const reserved = defineValidatingWebhook({ name: 'reserved', kind: 'Pod', handler: (_r, context) => (context.metrics.counter({ name: 'kube_admission_requests_total', help: 'x' }), { allowed: true }) });
  const review = await reviewWebhook(reserved, admissionRequest(pod), { metricsRegistry: registry });
  t.match(review, { decision: 'error', failure: /is the server's own or uses its prefixes/ }, 'a handler that throws over it gets its failurePolicy');
});

t.test('permissions: declared beside the handler, checked for least privilege', async (t) => {
  const reader = defineValidatingWebhook({
    name: 'reader',
    kind: 'Pod',
    permissions: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['allowed-images'], namespace: 'webhooks', reason: 'reads the allow list' }],
    handler: () => ({ allowed: true }),
  });
  t.same(reader.permissions, [{ apiGroups: [''], resources: ['configmaps'], verbs: ['get'], resourceNames: ['allowed-images'], namespace: 'webhooks', reason: 'reads the allow list' }]);
  t.equal(defineValidatingWebhook({ name: 'none', kind: 'Pod', handler: () => ({ allowed: true }) }).permissions, undefined, 'nothing unless declared');
  const wild = t.throws(() =>
    defineValidatingWebhook({ name: 'wild', kind: 'Pod', permissions: [{ apiGroups: ['*'], resources: ['secrets'], verbs: ['get', 'escalate' as 'get'] }], handler: () => ({ allowed: true }) }),
  ) as WebhookDefinitionError;
  t.match(wild.problems.join('\n'), /permissions\[0\]\.apiGroups: "\*" is not granted to handlers \(least privilege\)/);
  t.match(wild.problems.join('\n'), /permissions\[0\]\.verbs: "escalate" is not one of get, list/);
});
