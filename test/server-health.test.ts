import http from 'node:http';
import t from 'tap';
import { Gauge, Registry } from 'prom-client';
import { createHealthServer } from '../src/server/health-server.js';
import { captureLogs } from './support/server/server-harness.js';

function get(port: number, path: string): Promise<{ status: number; type: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, timeout: 5000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: res.headers['content-type'], text }));
    });
    req.on('timeout', () => req.destroy(new Error('client timeout')));
    req.on('error', reject);
  });
}

t.test('healthz, readyz through the lifecycle states, metrics from the given registry', async (t) => {
  const metricsRegistry = new Registry();
  const notAfter = new Gauge({ name: 'test_certificate_not_after_seconds', help: 'registered by another module', registers: [metricsRegistry] });
  notAfter.set(1_900_000_000);
  const health = createHealthServer({ host: '127.0.0.1', port: 0, metricsRegistry, logger: captureLogs().logger });
  const { port } = await health.listen();
  t.teardown(() => health.close(1000));

  t.equal((await get(port, '/healthz')).status, 200);
  const starting = await get(port, '/readyz');
  t.equal(starting.status, 503, 'not ready until the lifecycle says so');
  t.match(JSON.parse(starting.text), { status: 'starting' });

  health.setReady(true);
  t.equal((await get(port, '/readyz')).status, 200);
  health.setReady(false);
  t.equal((await get(port, '/readyz')).status, 503);
  health.setReady(true);
  t.equal(health.readiness, 'ready');

  health.setShuttingDown();
  const draining = await get(port, '/readyz');
  t.equal(draining.status, 200, 'still 200 while it serves during the shutdown: a serving terminating endpoint is kube-proxy\'s fallback');
  t.match(JSON.parse(draining.text), { status: 'draining' });
  health.setReady(false);
  t.equal((await get(port, '/readyz')).status, 200, 'the lifecycle cannot take it back while draining');
  health.setClosing();
  const shutting = await get(port, '/readyz');
  t.equal(shutting.status, 503, '503 once the listener closes');
  t.match(JSON.parse(shutting.text), { status: 'shutting-down' });
  health.setReady(true);
  t.equal((await get(port, '/readyz')).status, 503, 'readiness cannot come back after that');
  t.equal((await get(port, '/healthz')).status, 200, 'still alive while shutting down');

  const metrics = await get(port, '/metrics');
  t.equal(metrics.status, 200);
  t.match(metrics.type, /^text\/plain; version=0\.0\.4/);
  t.match(metrics.text, /test_certificate_not_after_seconds 1900000000/);

  const missing = await get(port, '/nothing');
  t.equal(missing.status, 404);
  t.match(JSON.parse(missing.text), { error: /use \/healthz, \/readyz or \/metrics/ });
});

t.test('admission metrics appear on the health port in Prometheus format', async (t) => {
  const { serve, createTestCa, validating, podReview, request } = await import('./support/server/server-harness.js');
  const ca = createTestCa();
  const served = await serve([validating('allow', () => ({ allowed: true }))], { ca });
  const health = createHealthServer({ host: '127.0.0.1', port: 0, metricsRegistry: served.metricsRegistry, logger: served.logs.logger });
  const { port } = await health.listen();
  t.teardown(async () => {
    await health.close(1000);
    await served.server.close(1000);
  });
  await request(served.port, '/validate/allow', podReview(), { ca: ca.certPem });
  const text = (await get(port, '/metrics')).text;
  t.match(text, /# TYPE kube_admission_requests_total counter/);
  t.match(text, /kube_admission_requests_total\{webhook="allow",operation="CREATE",decision="allowed"\} 1/);
  t.match(text, /# TYPE kube_admission_request_duration_seconds histogram/);
  t.match(text, /kube_admission_request_duration_seconds_count\{webhook="allow"\} 1/);
  t.match(text, /# TYPE kube_admission_requests_in_flight gauge/);
});

t.test('a replica that was not ready when shutdown began answers 503 at once', async (t) => {
  const health = createHealthServer({ host: '127.0.0.1', port: 0, metricsRegistry: new Registry(), logger: captureLogs().logger });
  const { port } = await health.listen();
  t.teardown(() => health.close(1000));
  health.setShuttingDown();
  t.equal((await get(port, '/readyz')).status, 503);
  t.equal(health.readiness, 'shutting-down');
});
