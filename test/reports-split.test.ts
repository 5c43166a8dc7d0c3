// Report objects from kept results (src/reports/report-objects.ts): a namespace's results in one
// report while they fit, else split by the objects' uid hashes, never a body over the limit,
// every result exactly once, the same reports for the same results however they were kept, and a
// change to one object rewriting one report. Judged on the JSON alone, parsed here.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { encodeResults, KeptObjects, RuleTable, type KeptKind } from '../src/reports/kept-objects.js';
import { REPORT_APIS } from '../src/reports/report-api.js';
import { reportsOf, type ReportShape } from '../src/reports/report-objects.js';
import type { ReportedRule, RuleResult } from '../src/reports/results.js';

const POD: KeptKind = { apiVersion: 'v1', kind: 'Pod', key: '/pods' };
const RULES = ['deny-privileged', 'require-app-label', 'pinned-images'];

interface Given {
  name: string;
  uid: string;
  results: RuleResult[];
}

interface ParsedResult {
  policy: string;
  result: string;
  message?: string;
  severity?: string;
  source?: string;
  resources: { apiVersion: string; kind: string; name: string; namespace?: string; uid: string }[];
}

interface ParsedReport {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels: Record<string, string> };
  source?: string;
  summary: Record<string, number>;
  results: ParsedResult[];
}

function given(count: number, seed = 0): Given[] {
  return Array.from({ length: count }, (_, i) => ({
    name: `web-${seed}-${i}`,
    uid: randomUUID(),
    results: RULES.map((rule, r) => ((i + r) % 5 === 0 ? { rule, result: 'fail' as const, message: `${rule}: pod web-${i} breaks it` } : { rule, result: 'pass' as const })),
  }));
}

function shape(maxBytes: number, rules = new RuleTable(), reported: string[] = RULES): ReportShape {
  return {
    api: REPORT_APIS.openreports,
    install: 'kas',
    maxBytes,
    rules,
    reported: new Map<string, ReportedRule>(reported.map((name) => [name, { name, ...(name === 'deny-privileged' ? { severity: 'high' as const } : {}) }])),
  };
}

function kept(objects: readonly Given[], rules: RuleTable, namespace = 'team-a'): KeptObjects {
  const store = new KeptObjects();
  for (const o of objects) store.set(POD, { namespace, name: o.name, uid: o.uid, resourceVersion: '1' }, encodeResults(o.results, rules));
  return store;
}

const parse = (json: string): ParsedReport => JSON.parse(json) as ParsedReport;

t.test('a namespace whose results fit is one report named after the install, with its summary', async (t) => {
  const objects = given(3);
  const s = shape(256 * 1024);
  const { reports, oversized } = reportsOf('team-a', kept(objects, s.rules).objectsIn('team-a'), s);
  t.same(oversized, []);
  t.equal(reports.length, 1);
  const report = parse(reports[0]!.json);
  t.match(report, { apiVersion: 'openreports.io/v1alpha1', kind: 'Report', metadata: { name: 'kas', namespace: 'team-a', labels: { 'kube-admission-server.io/install': 'kas' } }, source: 'kube-admission-server' });
  t.equal(report.results.length, 9, 'one result per object and rule');
  const fails = report.results.filter((r) => r.result === 'fail').length;
  t.same(report.summary, { pass: 9 - fails, fail: fails, warn: 0, error: 0, skip: 0 });
  const first = report.results.find((r) => r.resources[0]?.name === 'web-0-0' && r.policy === 'deny-privileged');
  t.same(first, { policy: 'deny-privileged', severity: 'high', result: 'fail', message: 'deny-privileged: pod web-0 breaks it', resources: [{ apiVersion: 'v1', kind: 'Pod', name: 'web-0-0', namespace: 'team-a', uid: objects[0]!.uid }] });
  t.notOk(report.results.some((r) => r.result === 'pass' && 'message' in r), 'a pass carries no message');
});

t.test('many objects: split under the limit, every result once, deterministic, a change rewrites one report', async (t) => {
  const limit = 16 * 1024;
  const objects = given(1500);
  const rules = new RuleTable();
  const s = shape(limit, rules);
  const { reports } = reportsOf('team-a', kept(objects, rules).objectsIn('team-a'), s);
  t.ok(reports.length > 20, `split into ${reports.length} reports`);
  for (const report of reports) t.ok(Buffer.byteLength(report.json) <= limit, `${report.name}: ${Buffer.byteLength(report.json)} bytes`);
  const seen = new Map<string, number>();
  for (const report of reports) {
    const parsed = parse(report.json);
    t.equal(parsed.metadata.name, report.name);
    const counted = { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 } as Record<string, number>;
    for (const r of parsed.results) {
      counted[r.result]!++;
      const key = `${r.resources[0]!.uid}/${r.policy}`;
      seen.set(key, (seen.get(key) ?? 0) + 1);
    }
    t.same(parsed.summary, counted, `${report.name}: the summary counts its own results`);
  }
  t.equal(seen.size, objects.length * RULES.length, 'every object and rule');
  t.ok([...seen.values()].every((n) => n === 1), 'each exactly once');
  const expected = new Map(objects.flatMap((o) => o.results.map((r) => [`${o.uid}/${r.rule}`, r.result])));
  for (const report of reports) for (const r of parse(report.json).results) t.equal(r.result, expected.get(`${r.resources[0]!.uid}/${r.policy}`));
  t.equal(new Set(reports.map((r) => r.name)).size, reports.length, 'unique names');

  // The same results kept in another order, by another rule table: the same reports, byte for byte.
  const shuffled = [...objects].reverse();
  const otherRules = new RuleTable();
  otherRules.indexOf('some-rule-seen-before');
  const again = reportsOf('team-a', kept(shuffled, otherRules).objectsIn('team-a'), shape(limit, otherRules)).reports;
  t.same(
    again.map((r) => [r.name, r.json]),
    reports.map((r) => [r.name, r.json]),
  );

  // One object's result changes: exactly one report differs.
  const changed = objects.map((o, i) => (i === 700 ? { ...o, results: o.results.map((r) => ({ rule: r.rule, result: 'warn' as const, message: 'now a warning' })) } : o));
  const after = reportsOf('team-a', kept(changed, rules).objectsIn('team-a'), s).reports;
  const before = new Map(reports.map((r) => [r.name, r.json]));
  const differing = after.filter((r) => before.get(r.name) !== r.json);
  t.equal(differing.length, 1, 'one report rewritten');
  t.same(after.map((r) => r.name), reports.map((r) => r.name), 'no report renamed');
});

t.test('results of rules no longer reported are left out; an object without results makes no report', async (t) => {
  const rules = new RuleTable();
  const objects = given(4);
  const s = shape(64 * 1024, rules, ['pinned-images']);
  const { reports } = reportsOf('team-a', kept(objects, rules).objectsIn('team-a'), s);
  t.same(new Set(parse(reports[0]!.json).results.map((r) => r.policy)), new Set(['pinned-images']));
  t.same(reportsOf('team-a', kept(objects, rules).objectsIn('team-a'), shape(64 * 1024, rules, [])).reports, []);
  const store = new KeptObjects();
  store.set(POD, { namespace: 'team-a', name: 'bare', uid: randomUUID(), resourceVersion: '1' }, encodeResults([], rules));
  t.same(reportsOf('team-a', store.objectsIn('team-a'), s).reports, []);
});

t.test('cluster-scoped objects go to a cluster report; wgpolicyk8s names the source on each result', async (t) => {
  const rules = new RuleTable();
  const namespace: KeptKind = { apiVersion: 'v1', kind: 'Namespace', key: '/namespaces' };
  const store = new KeptObjects();
  store.set(namespace, { namespace: '', name: 'team-a', uid: randomUUID(), resourceVersion: '1' }, encodeResults([{ rule: 'deny-privileged', result: 'pass' }], rules));
  const open = parse(reportsOf('', store.objectsIn(''), shape(64 * 1024, rules)).reports[0]!.json);
  t.match(open, { kind: 'ClusterReport', metadata: { name: 'kas' }, results: [{ resources: [{ kind: 'Namespace', name: 'team-a' }] }] });
  t.notOk('namespace' in open.metadata);
  t.notOk('namespace' in open.results[0]!.resources[0]!);
  const wg = parse(reportsOf('', store.objectsIn(''), { ...shape(64 * 1024, rules), api: REPORT_APIS.wgpolicyk8s }).reports[0]!.json);
  t.match(wg, { apiVersion: 'wgpolicyk8s.io/v1alpha2', kind: 'ClusterPolicyReport', results: [{ source: 'kube-admission-server', policy: 'deny-privileged' }] });
  t.notOk('source' in wg);
});

t.test('an object whose results alone exceed the limit is left out and returned', async (t) => {
  const rules = new RuleTable();
  const big = { name: 'huge', uid: randomUUID(), results: RULES.map((rule) => ({ rule, result: 'fail' as const, message: 'x'.repeat(1000) })) };
  const small = given(2);
  const { reports, oversized } = reportsOf('team-a', kept([big, ...small], rules).objectsIn('team-a'), shape(3000, rules));
  t.same(oversized.map((o) => o.object.name), ['huge']);
  t.ok(reports.every((r) => Buffer.byteLength(r.json) <= 3000));
  t.notOk(reports.some((r) => parse(r.json).results.some((x) => x.resources[0]!.name === 'huge')));
});
