// Every case of every table of Kubernetes' CEL library tests (k8s.io/apiserver pkg/cel/library
// *_test.go: cidr, ip, format, quantity, semver and cost), run as a cel rule through the policy
// path and judged by what its Go test expects. The cases this server still answers otherwise are
// listed with why in the data file's knownDifferences: each is asserted to disagree, so the test
// fails when one starts agreeing (take it off the list) or a new one appears.
import t from 'tap';
import { disagreement, readLibraryCases, runCase } from './support/policy/kubernetes-cel-cases.js';

const { source, cases, knownDifferences } = readLibraryCases();

t.test('the data holds each case once and names only its own cases as known differences', async (t) => {
  const names = cases.map((c) => c.name);
  t.equal(new Set(names).size, names.length, 'case names are unique');
  for (const { name, reason } of knownDifferences) {
    t.ok(names.includes(name), `known difference ${name} is a case`);
    t.ok(reason.trim().length > 0, `${name} says why`);
  }
  t.equal(new Set(knownDifferences.map((d) => d.name)).size, knownDifferences.length, 'each known difference once');
  t.equal(cases.length, 565, 'every case of the six tables, loops unrolled');
});

t.test(`each case answers as Kubernetes' test expects (${source})`, async (t) => {
  const known = new Map(knownDifferences.map((d) => [d.name, d.reason]));
  let agreeing = 0;
  for (const c of cases) {
    const why = disagreement(c, await runCase(c));
    if (why === undefined) agreeing++;
    if (known.has(c.name)) t.ok(why !== undefined, `${c.name}: a known difference (${known.get(c.name)}) that now agrees: take it off the list`);
    else t.equal(why, undefined, `${c.name}: ${c.expression}`);
  }
  t.comment(`${agreeing} of ${cases.length} cases agree (${((100 * agreeing) / cases.length).toFixed(1)}%)`);
  t.equal(agreeing, cases.length - known.size, 'every case agrees but the known differences');
});
