/**
 * The admission server's lines read as a log pipeline reads them: no key twice in a line (jq,
 * Loki and most parsers keep one of the two), so the object's name is `object`, beside the
 * logger's own `name`. Every review path that writes a line, each once, at debug.
 */
import t from 'tap';
import { parseStrictJson } from './support/logs/strict-json.js';
import { createTestCa, podReview, request, serve, validating } from './support/server/server-harness.js';

const ca = createTestCa();
const webhooks = [
  validating('allow', () => ({ allowed: true })),
  validating('deny', () => ({ allowed: false, message: 'no' })),
  validating('audit', () => ({ allowed: true, auditAnnotations: { 'not a qualified name!': 'x' } })),
  validating('throws', () => {
    throw new Error('boom');
  }, { failurePolicy: 'Ignore' }),
];
// A member named `newer` may be the registered policy's: the lifecycle says retry; others are not served.
const served = await serve(webhooks, { ca, unknownEntries: { decide: (_type, names) => (names.includes('newer') ? 'retry' : 'unserved') } });
t.teardown(() => served.server.close(2000));
const post = (path: string, body: unknown = podReview(), method?: string) => request(served.port, path, body, { ca: ca.certPem, ...(method ? { method } : {}) });

/** What each line that concerns one object says, by its message. */
const OBJECT_LINES = [
  'admission review',
  'admission review answered by failurePolicy',
  'review for a webhook this replica does not serve (yet or any more): allowed with a warning',
  'review names entries this replica does not serve (yet or any more): the others answer, with a warning for these',
  'review names entries this replica does not run and may be newer: answered 503 so kube-apiserver retries',
];

t.test('no line of any review path repeats a key; the object is `object`, the logger `name`', async (t) => {
  const calls: [path: string, status: number][] = [
    ['/validate/allow', 200],
    ['/validate/deny', 200],
    ['/validate/audit', 200],
    ['/validate/throws', 200],
    ['/validate/validating-fail-t10/allow.deny', 200],
    ['/validate/not-served', 200],
    ['/validate/validating-fail-t10/allow.gone', 200],
    ['/validate/validating-fail-t10/allow.newer', 503],
  ];
  for (const [path, status] of calls) t.equal((await post(path)).status, status, path);
  t.equal((await post('/validate/allow', { kind: 'AdmissionReview' })).status, 400, 'an invalid review');
  t.equal((await post('/validate/allow', undefined, 'GET')).status, 405, 'a wrong method');
  t.equal((await post('/elsewhere')).status, 404, 'an unknown path');

  const { texts } = served.logs;
  t.ok(texts.length >= calls.length + 3, `a line for each call (${texts.length})`);
  for (const text of texts) t.doesNotThrow(() => parseStrictJson(text), `no key twice: ${text}`);
  const byObject = served.logs.lines.filter((line) => OBJECT_LINES.includes(String(line['msg'])));
  t.same([...new Set(byObject.map((line) => line['msg']))].sort(), [...OBJECT_LINES].sort(), 'every line about an object was written');
  for (const line of byObject) t.match(line, { name: 'kube-admission-server', kind: 'Pod', namespace: 'team-a', object: 'web' }, String(line['msg']));
  t.match(
    served.logs.lines.find((line) => line['msg'] === 'admission review' && line['webhook'] === 'validating-fail-t10'),
    { entries: [{ entry: 'allow', decision: 'allowed' }, { entry: 'deny', decision: 'denied' }], decidedBy: 'deny' },
    "a group's line names its entries as `entry`",
  );
});
