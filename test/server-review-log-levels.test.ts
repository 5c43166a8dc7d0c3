import t from 'tap';
import { createTestCa, mutating, podReview, request, serve, validating } from './support/server/server-harness.js';

const ca = createTestCa();

const webhooks = [
  validating('allow', () => ({ allowed: true })),
  mutating('add-label', (req) => {
    const object = req.object ?? {};
    object.metadata = { ...object.metadata, labels: { ...object.metadata?.labels, team: 'a' } };
    return { allowed: true, object };
  }),
  validating('deny', () => ({ allowed: false, message: 'no' })),
  validating('warn', () => ({ allowed: true, warnings: ['careful'] })),
  validating('audit', () => ({ allowed: true, auditAnnotations: { 'policy-violation': 'x' } })),
  validating('throws', () => {
    throw new Error('boom');
  }, { failurePolicy: 'Ignore' }),
];

const DEBUG = 20;
const INFO = 30;
const WARN = 40;

/** Each webhook, the level of its review line, and whether the review was allowed. */
const CASES: [path: string, level: number, decision: string][] = [
  ['/validate/allow', DEBUG, 'allowed'],
  ['/mutate/add-label', DEBUG, 'allowed'],
  ['/validate/deny', INFO, 'denied'],
  ['/validate/warn', INFO, 'allowed'],
  ['/validate/audit', INFO, 'allowed'],
  ['/validate/throws', WARN, 'error'],
];

function uidOf(body: Record<string, unknown>): string {
  return (body.request as { uid: string }).uid;
}

t.test('at debug: every review has its line, allowed ones at debug, the rest at info or above', async (t) => {
  const served = await serve(webhooks, { ca });
  t.teardown(() => served.server.close(2000));
  for (const [path, level, decision] of CASES) {
    const body = podReview();
    const answer = await request(served.port, path, body, { ca: ca.certPem });
    t.equal(answer.status, 200, path);
    const lines = served.logs.lines.filter((line) => line.uid === uidOf(body) && line.webhook !== undefined);
    t.equal(lines.length, 1, `${path}: one line`);
    t.match(lines[0], { level, decision, kind: 'Pod', namespace: 'team-a', operation: 'CREATE' }, path);
    t.type(lines[0]?.ms, 'number', `${path}: the same fields at every level`);
  }
  const patched = served.logs.lines.find((line) => line.webhook === 'add-label');
  t.equal(patched?.patched, true, 'an allowed review with a patch says so at debug');
});

t.test('at info (the default): allowed reviews write nothing, the others their line', async (t) => {
  const served = await serve(webhooks, { ca, logLevel: 'info' });
  t.teardown(() => served.server.close(2000));
  for (const [path, level] of CASES) {
    const body = podReview();
    const answer = await request(served.port, path, body, { ca: ca.certPem });
    t.equal(answer.status, 200, path);
    const lines = served.logs.lines.filter((line) => line.uid === uidOf(body));
    t.equal(lines.length, level >= INFO ? 1 : 0, `${path}: ${level >= INFO ? 'logged' : 'not logged'}`);
  }
});
