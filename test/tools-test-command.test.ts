import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { runToolInProcess, tempDir } from './support/tools/tool-runner.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const POLICY_TESTS = join(ROOT, 'policies', 'tests');

t.test('the bundled policies pass their shipped tests', async (t) => {
  const run = await runToolInProcess(['test', POLICY_TESTS]);
  t.equal(run.code, 0, 'every shipped test passes');
  if (run.code !== 0) t.comment(run.stdout + run.stderr);
  t.match(run.stdout, /^RESULT +TEST +RESOURCE +WEBHOOK +EXPECTED +GOT$/m);
  t.match(run.stdout, /^pass +cel policy +Pod\/team-a\/greedy +memory-limits +denied +denied$/m);
  t.match(run.stdout, /^17 passed, 0 failed$/m);
  t.notMatch(run.stdout, /FAIL/);
});

t.test('a mismatch fails the run (exit 1), says why, and the JUnit report records it', async (t) => {
  const dir = await tempDir(t);
  await cp(join(POLICY_TESTS, 'example'), dir, { recursive: true });
  const testFile = join(dir, 'example-test.yaml');
  const text = (await readFile(testFile, 'utf8')).replace('policy: ../../example.yaml', `policy: ${join(ROOT, 'policies', 'example.yaml')}`);
  // Two wrong expectations: a decision and a patched field.
  await writeFile(
    testFile,
    text
      .replace('webhook: deny-privileged\n    decision: denied', 'webhook: deny-privileged\n    decision: allowed')
      .replace('kube-admission-server/policy: example', 'kube-admission-server/policy: other'),
  );
  const junit = join(dir, 'junit.xml');
  const run = await runToolInProcess(['test', dir, '--junit', junit]);
  t.equal(run.code, 1);
  t.match(run.stdout, /^FAIL +example policy +Pod\/team-a\/root-shell +deny-privileged +allowed +denied$/m);
  t.match(run.stdout, /Pod\/team-a\/root-shell deny-privileged: expected allowed, got denied: container "shell" sets securityContext.privileged/);
  t.match(run.stdout, /Pod\/team-a\/web default-labels: after the patch, metadata.annotations.kube-admission-server\/policy: expected "other", got "example"/);
  t.match(run.stdout, /^7 passed, 2 failed$/m);
  const xml = await readFile(junit, 'utf8');
  t.match(xml, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="kube-admission-server test" tests="9" failures="2">/);
  t.equal(xml.match(/<testcase /g)?.length, 9);
  t.equal(xml.match(/<failure message="/g)?.length, 2);
  t.match(xml, /<testcase name="Pod\/team-a\/root-shell deny-privileged allowed" classname="example policy"><failure message="expected allowed, got denied: container &quot;shell&quot;/);
});

t.test('bad test files exit 2 and name the file', async (t) => {
  const dir = await tempDir(t);
  const empty = await runToolInProcess(['test', dir]);
  t.equal(empty.code, 2);
  t.match(empty.stderr, /no test files/);
  await writeFile(join(dir, 'bad-test.yaml'), 'apiVersion: kube-admission-server/v1\nkind: PolicyTest\nresources: [r.yaml]\nresults: [{ resource: Pod/x, webhook: w, decision: maybe }]\n');
  const bad = await runToolInProcess(['test', dir]);
  t.equal(bad.code, 2);
  t.match(bad.stderr, /bad-test\.yaml: results\[0\]\.decision must be one of allowed, denied, warn, audit, skipped, error/);
  await writeFile(join(dir, 'bad-test.yaml'), 'apiVersion: kube-admission-server/v1\nkind: PolicyTest\nresources: [missing.yaml]\nresults: [{ resource: Pod/x, webhook: w, decision: denied }]\n');
  const missing = await runToolInProcess(['test', dir]);
  t.equal(missing.code, 2, 'a resource file that cannot be read is bad input');
  t.match(missing.stdout, /missing\.yaml: cannot read/);
  const noDir = await runToolInProcess(['test']);
  t.equal(noDir.code, 2);
  t.match(noDir.stderr, /give exactly one folder/);
});
