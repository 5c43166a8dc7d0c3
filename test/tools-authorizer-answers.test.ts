// evaluate and test answer `authorizer` checks from answers given to them (--authorizer-answer on
// the command line, --authorizer-answers FILE), in cel rules and in matchConditions alike; a check
// no answer matches stops the command as bad input (exit 2), naming the check and the answer to
// add, whatever the failurePolicy would have made of the error.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { runToolInProcess, tempDir } from './support/tools/tool-runner.js';

const POLICY = `apiVersion: kube-admission-server/v1
kind: Policy
webhooks:
  - name: deployment-deleters
    kind: cel
    failurePolicy: Ignore
    rules: [{ operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods] }]
    validations:
      - expression: "authorizer.group('apps').resource('deployments').namespace(object.metadata.namespace).check('delete').allowed()"
        message: only those who may delete Deployments here may create Pods by hand
      - expression: "!authorizer.path('/debug').check('get').errored()"
        message: the authorizer failed
  - name: team-label
    kind: requireLabels
    params: { labels: [{ key: team }] }
    matchConditions:
      - name: not-for-node-admins
        expression: "!authorizer.group('').resource('nodes').check('update').allowed()"
`;
const POD = `apiVersion: v1
kind: Pod
metadata: { name: web, namespace: team-a, labels: { team: a } }
spec: { containers: [{ name: web, image: registry.k8s.io/pause:3.10 }] }
`;
const MAY_DELETE = 'allowed=true,verb=delete,apiGroup=apps,resource=deployments,namespace=team-a';
const DEBUG_OK = 'allowed=true,path=/debug';
const NOT_NODE_ADMIN = 'allowed=false,verb=update,resource=nodes';

async function files(t: Test): Promise<string> {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'policy.yaml'), POLICY);
  await writeFile(join(dir, 'pod.yaml'), POD);
  return dir;
}

/** Each answer as --authorizer-answer, each `@FILE` as --authorizer-answers FILE (verbose: skipped webhooks listed). */
const evaluate = (dir: string, ...answers: string[]) =>
  runToolInProcess(['evaluate', '-v', '-f', join(dir, 'pod.yaml'), '--policy-file', join(dir, 'policy.yaml'), ...answers.flatMap((a) => (a.startsWith('@') ? ['--authorizer-answers', a.slice(1)] : ['--authorizer-answer', a]))]);

t.test('answers on the command line decide the checks of rules and matchConditions', async (t) => {
  const dir = await files(t);
  const allowed = await evaluate(dir, MAY_DELETE, DEBUG_OK, NOT_NODE_ADMIN);
  t.equal(allowed.code, 0, allowed.stderr);
  t.match(allowed.stdout, /validating deployment-deleters: allowed/);
  t.match(allowed.stdout, /validating team-label: allowed/);

  const refused = await evaluate(dir, MAY_DELETE.replace('allowed=true', 'allowed=false'), DEBUG_OK, NOT_NODE_ADMIN);
  t.equal(refused.code, 1);
  t.match(refused.stdout, /only those who may delete Deployments here may create Pods by hand/);

  const skipped = await evaluate(dir, MAY_DELETE, DEBUG_OK, 'allowed=true,verb=update,resource=nodes');
  t.equal(skipped.code, 0);
  t.match(skipped.stdout, /team-label: skipped \(matchCondition "not-for-node-admins" is false\)/, 'the matchCondition is false for a node admin: not called');

  const errored = await evaluate(dir, MAY_DELETE, 'allowed=false,path=/debug,error=webhook authorizer unreachable', NOT_NODE_ADMIN);
  t.equal(errored.code, 1, 'error=TEXT is an authorizer that reports an error: errored() is true');
  t.match(errored.stdout, /the authorizer failed/);

  const firstWins = await evaluate(dir, MAY_DELETE.replace('allowed=true', 'allowed=false'), 'allowed=true', DEBUG_OK, NOT_NODE_ADMIN);
  t.equal(firstWins.code, 1, 'the first answer that matches answers; a later catch-all does not override it');
});

t.test('--authorizer-answers FILE: a YAML list with the same fields, after the command line\'s', async (t) => {
  const dir = await files(t);
  await writeFile(
    join(dir, 'answers.yaml'),
    ['- { allowed: true, user: kubernetes-admin, verb: delete, apiGroup: apps, resource: deployments, namespace: team-a }', '- { allowed: true, path: /debug }', '- { allowed: false }', ''].join('\n'),
  );
  const run = await evaluate(dir, '@' + join(dir, 'answers.yaml'));
  t.equal(run.code, 0, run.stderr);
  const overridden = await evaluate(dir, MAY_DELETE.replace('allowed=true', 'allowed=false'), '@' + join(dir, 'answers.yaml'));
  t.equal(overridden.code, 1, 'the command line comes first');

  await writeFile(join(dir, 'bad.yaml'), '- { allowed: maybe }\n');
  const bad = await evaluate(dir, '@' + join(dir, 'bad.yaml'));
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--authorizer-answers .*bad\.yaml: answer 1: allowed must be true or false, not "maybe"/);
  await writeFile(join(dir, 'map.yaml'), 'allowed: true\n');
  t.match((await evaluate(dir, '@' + join(dir, 'map.yaml'))).stderr, /must be a YAML list of answers/);
  t.match((await evaluate(dir, '@' + join(dir, 'absent.yaml'))).stderr, /--authorizer-answers .*absent\.yaml: ENOENT/);
});

t.test('a check without an answer is bad input (exit 2) naming it and the answer to add, even under failurePolicy Ignore', async (t) => {
  const dir = await files(t);
  const run = await evaluate(dir, DEBUG_OK, NOT_NODE_ADMIN);
  t.equal(run.code, 2);
  t.match(run.stderr, 'authorizer checks without an answer:');
  t.match(run.stderr, 'no answer given to whether kubernetes-admin may delete apps/deployments in namespace team-a; give one, e.g. --authorizer-answer allowed=true,user=kubernetes-admin,verb=delete,apiGroup=apps,resource=deployments,namespace=team-a');
  t.equal(run.stdout, '', 'no report that an unanswered check decided');
  const none = await evaluate(dir);
  t.match(none.stderr, /kubernetes-admin may get \/debug.*\n.*kubernetes-admin may update nodes/s, 'every unanswered check, once each');
});

t.test('bad --authorizer-answer values name the flag and the fix', async (t) => {
  const dir = await files(t);
  for (const [value, problem] of [
    ['allowed=maybe', /--authorizer-answer: allowed must be true or false, not "maybe"/],
    ['verb=get', /--authorizer-answer: give allowed=true or allowed=false/],
    ['allowed=true,colour=red', /--authorizer-answer: unknown field "colour"; the fields are allowed, reason, error, user, group, verb, apiGroup, resource/],
    ['allowed', /--authorizer-answer: "allowed" is not KEY=VALUE/],
  ] as const) {
    const run = await evaluate(dir, value);
    t.equal(run.code, 2, value);
    t.match(run.stderr, problem, value);
  }
});

t.test('test: the answers apply to every test file; an unanswered check is that test\'s error', async (t) => {
  const dir = await files(t);
  await writeFile(
    join(dir, 'deleters-test.yaml'),
    ['apiVersion: kube-admission-server/v1', 'kind: PolicyTest', 'name: deleters', 'policy: policy.yaml', 'resources: [pod.yaml]', 'results:', '  - { resource: Pod/team-a/web, webhook: deployment-deleters, decision: denied }', ''].join('\n'),
  );
  const denied = await runToolInProcess(['test', dir, '--authorizer-answer', MAY_DELETE.replace('allowed=true', 'allowed=false'), '--authorizer-answer', DEBUG_OK, '--authorizer-answer', NOT_NODE_ADMIN]);
  t.equal(denied.code, 0, denied.stdout);
  const allowed = await runToolInProcess(['test', dir, '--authorizer-answer', MAY_DELETE, '--authorizer-answer', DEBUG_OK, '--authorizer-answer', NOT_NODE_ADMIN]);
  t.equal(allowed.code, 1, 'the test expects denied');
  const unanswered = await runToolInProcess(['test', dir]);
  t.equal(unanswered.code, 2);
  t.match(unanswered.stdout, /no answer given to whether kubernetes-admin may delete apps\/deployments in namespace team-a/);
});
