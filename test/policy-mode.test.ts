import t from 'tap';
import { applyMode, isValidAuditAnnotationKey, truncateWarning } from '../src/admission/mode.js';
import { isQualifiedName } from '../src/admission/kube-names.js';
import { admissionRequest, pod, review, webhookFrom } from './support/policy/policy-fixtures.js';

const findings = ['container "app" sets securityContext.privileged: true', 'pod sets hostPID: true'];

t.test('no findings allow in every mode', async (t) => {
  for (const mode of ['enforce', 'warn', 'audit'] as const) t.same(applyMode([], mode), { allowed: true }, mode);
});

t.test('enforce denies with code 403 and every finding in the message', async (t) => {
  t.same(applyMode(findings, 'enforce'), {
    allowed: false,
    code: 403,
    reason: 'Forbidden',
    message: 'container "app" sets securityContext.privileged: true; pod sets hostPID: true',
  });
});

t.test('warn allows with one warning per finding, whole (kube-apiserver does not cut at 120 characters)', async (t) => {
  const long = `image ${'x'.repeat(200)} is not allowed`;
  const decision = applyMode([...findings, long], 'warn', { source: 'deny-privileged' });
  t.equal(decision.allowed, true);
  t.same(decision.warnings, [...findings, long].map((f) => `deny-privileged: ${f}`));
});

t.test('truncateWarning, for handlers that want short warnings, counts characters, not UTF-16 units', async (t) => {
  const emoji = '🚫'.repeat(130);
  const cut = truncateWarning(emoji);
  t.equal(Array.from(cut).length, 120);
  t.equal(cut.slice(0, 2), '🚫', 'no surrogate pair is split');
  t.equal(truncateWarning('short'), 'short');
});

t.test('audit allows with one audit annotation under a valid key', async (t) => {
  const decision = applyMode(findings, 'audit');
  t.same(decision, { allowed: true, auditAnnotations: { 'policy-violation': findings.join('; ') } });
  for (const key of Object.keys(decision.auditAnnotations ?? {})) {
    t.ok(isValidAuditAnnotationKey(key));
    t.ok(isQualifiedName(`deny-privileged.kube-admission-server.io/${key}`), 'the key kube-apiserver stores is a qualified name');
  }
  t.throws(() => applyMode(findings, 'audit', { auditKey: 'not/valid' }), /not a valid qualified-name part/);
});

t.test('audit annotation keys follow the qualified-name part syntax', async (t) => {
  for (const key of ['policy-violation', 'a', 'A1', 'x_y.z-w']) t.ok(isValidAuditAnnotationKey(key), key);
  for (const key of ['', '-a', 'a-', 'a/b', 'a b', 'x'.repeat(64)]) t.notOk(isValidAuditAnnotationKey(key), key);
});

t.test('the mode of a policy entry decides the answer of its webhook', async (t) => {
  const body = (mode: string): string => `webhooks:
  - name: deny-host
    kind: denyHostNamespaces
    mode: ${mode}
`;
  const request = admissionRequest(pod({ hostNetwork: true, containers: [] }));
  const message = "pod sets hostNetwork: true; sharing the host's namespaces is not allowed";
  t.same(await review(webhookFrom(body('enforce')), request), { allowed: false, code: 403, reason: 'Forbidden', message });
  t.same(await review(webhookFrom(body('warn')), request), { allowed: true, warnings: [`deny-host: ${message}`] });
  t.same(await review(webhookFrom(body('audit')), request), { allowed: true, auditAnnotations: { 'policy-violation': message } });
  const unset = webhookFrom(`webhooks:
  - name: deny-host
    kind: denyHostNamespaces
`);
  t.match(await review(unset, request), { allowed: false }, 'enforce is the default mode');
});
