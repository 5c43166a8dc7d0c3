// `engine: webhook | native | auto` in the policy file: read per entry and at
// the policy level, refused with the line and the way out where kube-apiserver cannot run the
// entry, and decided against what a cluster serves (decideEngines) as the leader decides it.
import t from 'tap';
import { decideEngines } from '../src/policy/engine.js';
import { parsePolicy } from '../src/policy/policy-file.js';
import { policySchemaValidator } from '../src/policy/policy-schema.js';
import { parse } from 'yaml';

const CEL = (name: string, extra = '') => `  - name: ${name}
    kind: cel
${extra}    rules: [{ operations: [CREATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments] }]
    validations:
      - { expression: "object.spec.replicas <= 3", message: "at most 3 replicas" }
`;
const policy = (top: string, entries: string) => `apiVersion: kube-admission-server/v1\nkind: Policy\n${top}webhooks:\n${entries}`;

function loaded(text: string) {
  const result = parsePolicy(text, 'p.yaml');
  if (!result.ok) throw new Error(result.errors.join('\n'));
  return result;
}
function errorsOf(text: string): string[] {
  const result = parsePolicy(text, 'p.yaml');
  if (result.ok) throw new Error('expected the policy to be rejected');
  return result.errors;
}

t.test('nothing said: every entry runs in the webhook, as before engines existed', async (t) => {
  const { policy: p } = loaded(policy('', CEL('max-replicas') + '  - name: deny-privileged\n    kind: denyPrivileged\n'));
  t.equal(p.engine, undefined);
  t.same(p.entries.map((e) => e.engine), [undefined, undefined]);
  t.same(decideEngines(p.entries, { validatingPolicies: true }), { native: [], fellBack: [], refused: [] });
});

t.test('per entry and policy-level engines resolve to each entry', async (t) => {
  const { policy: p } = loaded(policy('engine: auto\n', CEL('a') + CEL('b', '    engine: native\n') + CEL('c', '    engine: webhook\n') + '  - name: deny-privileged\n    kind: denyPrivileged\n'));
  t.equal(p.engine, 'auto');
  t.same(p.entries.map((e) => e.engine), ['auto', 'native', undefined, 'auto']);
  const served = decideEngines(p.entries, { validatingPolicies: true });
  t.same(served.native.map((e) => e.spec.name), ['a', 'b']);
  t.match(served.fellBack, [{ entry: 'deny-privileged', why: /kind denyPrivileged is built into this server/ }]);
  t.same(served.refused, []);
  const old = decideEngines(p.entries, { validatingPolicies: false, why: 'v1.29.4' });
  t.same(old.native, []);
  t.match(old.fellBack, [{ entry: 'a', why: /does not serve admissionregistration.k8s.io\/v1 ValidatingAdmissionPolicy \(v1.29.4\)/ }, { entry: 'deny-privileged' }]);
  t.match(old.refused, [{ entry: 'b', why: /does not serve/ }]);
});

t.test('native where kube-apiserver cannot run the entry: the line, the reason and the fix', async (t) => {
  t.match(errorsOf(policy('', '  - name: deny-privileged\n    kind: denyPrivileged\n    engine: native\n')), [
    /^p\.yaml:6:\d+: webhooks\[0\]\.engine: engine: native cannot run this entry inside kube-apiserver: kind denyPrivileged is built into this server.*; use engine: webhook, or engine: auto/,
  ]);
  t.match(errorsOf(policy('', '  - name: need-owner\n    kind: requireLabels\n    engine: native\n    params: { labels: [{ key: owner }] }\n')), [/p\.yaml:6:\d+: webhooks\[0\]\.engine: engine: native .*kind requireLabels is built into this server/]);
  t.match(errorsOf(policy('', '  - name: default-labels\n    kind: defaultLabels\n    engine: native\n    mode: warn\n    params: { labels: { team: x } }\n')), [/engine: native .*mode warn reports what the rule would change without changing it: only the webhook can/]);
  t.match(errorsOf(policy('engine: native\n', '  - name: deny-privileged\n    kind: denyPrivileged\n')), [
    /^p\.yaml:6:\d+: webhooks\[0\]\.kind: the policy's engine: native \(line 3\) cannot run this entry .*set engine: webhook on this entry, or make the policy's engine auto/,
  ]);
  t.match(errorsOf(policy('', CEL('slow', '    engine: native\n    timeoutSeconds: 3\n'))), [/^p\.yaml:7:\d+: webhooks\[0\]\.timeoutSeconds: engine: native .*timeoutSeconds is a webhook's setting.*; remove timeoutSeconds, or use engine: webhook/]);
  t.match(errorsOf(policy('', CEL('shaped', '    engine: native\n    params: { max: 3 }\n'))), [/engine: native .*params are not a ConfigMap's string data/]);
  t.match(errorsOf(policy('', CEL('typo', '    engine: kube\n'))), [/p\.yaml:6:\d+: .*webhook, native, auto/]);
  t.match(errorsOf(policy('engine: inside\n', CEL('a'))), [/p\.yaml:3:\d+: .*webhook, native, auto/]);
  // auto with the same obstacles loads, and falls back with the reason.
  const { policy: p } = loaded(policy('', CEL('slow', '    engine: auto\n    timeoutSeconds: 3\n')));
  t.match(decideEngines(p.entries, { validatingPolicies: true }).fellBack, [{ entry: 'slow', why: /timeoutSeconds is a webhook's setting/ }]);
});

t.test('defaultLabels runs as a MutatingAdmissionPolicy where the cluster serves v1beta1, and falls back with the reason elsewhere', async (t) => {
  const { policy: p } = loaded(policy('', '  - name: team\n    kind: defaultLabels\n    engine: auto\n    params: { labels: { team: x } }\n' + CEL('a', '    engine: auto\n')));
  const both = decideEngines(p.entries, { validatingPolicies: true, mutatingPolicies: true });
  t.same(both.native.map((e) => e.spec.name), ['team', 'a']);
  const validatingOnly = decideEngines(p.entries, { validatingPolicies: true, mutatingPolicies: false, mutatingWhy: 'v1.33.2' });
  t.same(validatingOnly.native.map((e) => e.spec.name), ['a'], 'a cel entry needs only ValidatingAdmissionPolicy');
  t.match(validatingOnly.fellBack, [{ entry: 'team', why: /does not serve admissionregistration.k8s.io\/v1beta1 MutatingAdmissionPolicy \(v1.33.2\)/ }]);
});

t.test('the JSON schema takes engine where the loader does, and refuses other values', async (t) => {
  const validate = policySchemaValidator();
  t.ok(validate(parse(policy('engine: auto\n', CEL('a', '    engine: native\n')))), JSON.stringify(validate.errors));
  t.notOk(validate(parse(policy('engine: inside\n', CEL('a')))));
  t.notOk(validate(parse(policy('', CEL('a', '    engine: kube\n')))));
});
