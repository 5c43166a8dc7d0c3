// The self-check must fail for each real reason kube-apiserver's call would fail, within a
// realistic deadline, and say why. Each listener here is made by the test (certificates from
// test-certs.ts, independent of src/); test/e2e-self-check-startup.test.ts shows that such a
// failure stops the startup before anything is registered.
import t from 'tap';
import { pino } from 'pino';
import { runSelfCheck } from '../src/lifecycle/self-check.js';
import { EXIT_MARGIN_MS } from './support/deadline.js';
import { EXPECTED_REASON, IMPOSTOR_KINDS, startImpostor } from './support/tls/self-check-impostors.js';
import { createTestCa } from './support/tls/test-certs.js';

const SERVICE_HOST = 'kube-admission-server.kas.svc';
const DEADLINE_MS = 2000;
const trustedCa = createTestCa('the registered CA');

function check(port: number) {
  return runSelfCheck({
    host: '127.0.0.1',
    port,
    serverName: SERVICE_HOST,
    caBundlePem: trustedCa.certPem,
    path: '/validate/deny-privileged',
    namespace: 'kas',
    deadlineMs: DEADLINE_MS,
    signal: new AbortController().signal,
    logger: pino({ level: 'silent' }),
  });
}

t.test('the control: a listener that gets everything right passes on the first attempt', async (t) => {
  const honest = await startImpostor(t, { kind: 'honest', trustedCa, serviceHost: SERVICE_HOST });
  const result = await check(honest.port);
  t.equal(result.attempts, 1);
  t.equal(honest.connections, 1);
});

for (const kind of IMPOSTOR_KINDS) {
  t.test(`${kind}: the self-check fails within its ${DEADLINE_MS} ms deadline and names the reason`, async (t) => {
    const impostor = await startImpostor(t, { kind, trustedCa, serviceHost: SERVICE_HOST });
    const started = performance.now();
    const error = await check(impostor.port).then(
      () => undefined,
      (caught: unknown) => caught as Error,
    );
    const elapsed = performance.now() - started;
    t.ok(error, 'it failed');
    t.match(error?.message, new RegExp(`^self-check failed: no valid answer from https://${SERVICE_HOST.replace(/\./g, '\\.')}:${impostor.port} within ${DEADLINE_MS} ms`));
    t.match(error?.message, EXPECTED_REASON[kind], 'the last error says why');
    t.ok(impostor.connections >= 1, `it dialled the listener (${impostor.connections} connections)`);
    // Bounded by its own deadline: it retried until then (never gave up early), and not much longer.
    t.ok(elapsed >= DEADLINE_MS - 50, `kept trying until the deadline (${Math.round(elapsed)} ms)`);
    t.ok(elapsed < DEADLINE_MS + EXIT_MARGIN_MS, `gave up ${Math.round(elapsed)} ms after it started (deadline ${DEADLINE_MS} ms)`);
  });
}
