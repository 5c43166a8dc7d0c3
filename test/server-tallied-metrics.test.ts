import t from 'tap';
import { Counter, Histogram, Registry, type OpenMetricsContentType, type PrometheusContentType } from 'prom-client';
import { admissionMetrics } from '../src/server/review/metrics.js';
import { TalliedHistogram } from '../src/server/review/metrics.js';

// The oracle is prom-client itself: its own Histogram and Counter, fed the same observations on
// a registry of their own, must scrape exactly as the tallied metrics do.

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];
const CONFIG = { name: 'review_seconds', help: 'Time per review.', labelNames: ['webhook'] as const, buckets: BUCKETS };

/** Values below, on and between the bounds and past the highest, for two label values, the second first. */
const OBSERVATIONS: [string, number][] = [
  ['b', 0.0003],
  ['a', 0.001],
  ['a', 0.0010001],
  ['b', 0.0025],
  ['a', 0.04],
  ['a', 1],
  ['b', 7.5],
  ['a', 0],
];

type AnyRegistry = Registry<PrometheusContentType> | Registry<OpenMetricsContentType>;

function registry(openMetrics: boolean): AnyRegistry {
  if (!openMetrics) return new Registry();
  const created = new Registry<OpenMetricsContentType>();
  created.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  return created;
}

function pair(openMetrics = false) {
  const tallied = registry(openMetrics);
  const plain = registry(openMetrics);
  return {
    tallied,
    plain,
    histogram: new TalliedHistogram({ ...CONFIG, labelNames: ['webhook'], buckets: [...BUCKETS], registers: [tallied] }),
    oracle: new Histogram({ ...CONFIG, labelNames: ['webhook'], buckets: [...BUCKETS], registers: [plain] }),
  };
}

t.test('a tallied histogram scrapes as prom-client Histogram fed the same values', async (t) => {
  for (const openMetrics of [false, true]) {
    const format = openMetrics ? 'OpenMetrics' : 'Prometheus';
    const { tallied, plain, histogram, oracle } = pair(openMetrics);
    t.equal(await tallied.metrics(), await plain.metrics(), `nothing observed yet (${format})`);
    for (const [webhook, value] of OBSERVATIONS) {
      histogram.tally(webhook).observe(value);
      oracle.observe({ webhook }, value);
    }
    const text = await tallied.metrics();
    t.equal(text, await plain.metrics(), `same exposition (${format})`);
    t.equal(text.endsWith('# EOF\n'), openMetrics, `scraped as ${format}`);
    t.match(text, /review_seconds_bucket\{le="0\.001",webhook="a"\} 2\n/, 'a value on a bound counts in that bucket');
    t.same(await histogram.get(), await oracle.get(), 'get() as prom-client returns it');
  }
});

t.test('observe(labels, value) goes to the same tally; a form without the label is refused', async (t) => {
  const { tallied, plain, histogram, oracle } = pair();
  histogram.observe({ webhook: 'a' }, 0.002);
  histogram.tally('a').observe(0.2);
  oracle.observe({ webhook: 'a' }, 0.002);
  oracle.observe({ webhook: 'a' }, 0.2);
  t.equal(await tallied.metrics(), await plain.metrics());
  t.throws(() => histogram.observe(0.1), TypeError);
  t.throws(() => histogram.tally('a').observe(Number.NaN), TypeError, 'like prom-client, a value that is no finite number is refused');
});

t.test('reset() empties the histogram, and tallies held since keep counting', async (t) => {
  const { tallied, plain, histogram, oracle } = pair();
  const held = histogram.tally('a');
  held.observe(0.003);
  oracle.observe({ webhook: 'a' }, 0.003);
  tallied.resetMetrics();
  plain.resetMetrics();
  t.equal(await tallied.metrics(), await plain.metrics(), 'no series after the reset');
  held.observe(0.07);
  oracle.observe({ webhook: 'a' }, 0.07);
  t.equal(await tallied.metrics(), await plain.metrics(), 'only what came after the reset');
});

/** The lines of one metric family in an exposition. */
function family(text: string, name: string): string[] {
  return text.split('\n').filter((line) => line.startsWith(name) || line.endsWith(` ${name} counter`) || line.includes(` ${name} `));
}

t.test('admission metrics: requests counted per webhook, operation and decision, each counted once across scrapes', async (t) => {
  const registry = new Registry();
  const metrics = admissionMetrics(registry);
  const plain = new Registry();
  const oracle = new Counter({ name: 'kube_admission_requests_total', help: 'x', labelNames: ['webhook', 'operation', 'decision'], registers: [plain] });
  const count = (webhook: string, operation: 'CREATE' | 'DELETE' | '', decision: 'allowed' | 'denied' | 'invalid'): void => {
    metrics.webhook(webhook).countRequest(operation, decision);
    oracle.inc({ webhook, operation, decision });
  };
  count('require-labels', 'CREATE', 'allowed');
  count('require-labels', 'CREATE', 'allowed');
  count('require-labels', 'DELETE', 'denied');
  count('_unserved', '', 'invalid');
  const series = async (r: Registry) => family(await r.metrics(), 'kube_admission_requests_total').filter((line) => !line.startsWith('#')).sort();
  t.same(await series(registry), await series(plain), 'first scrape');
  t.same(await series(registry), await series(plain), 'a second scrape counts nothing twice');
  count('require-labels', 'CREATE', 'allowed');
  t.same(await series(registry), await series(plain), 'later counts are added');
  t.match(await registry.metrics(), /kube_admission_requests_total\{webhook="require-labels",operation="CREATE",decision="allowed"\} 3/);
});

t.test('admission metrics: durations per webhook; a label with only invalid requests has no duration series', async (t) => {
  const registry = new Registry();
  const metrics = admissionMetrics(registry);
  metrics.webhook('_unserved').countRequest('', 'invalid');
  metrics.webhook('require-labels').observeDuration(0.0004);
  const text = await registry.metrics();
  t.match(text, /kube_admission_request_duration_seconds_count\{webhook="require-labels"\} 1/);
  t.match(text, /kube_admission_request_duration_seconds_bucket\{le="0\.001",webhook="require-labels"\} 1/);
  t.notMatch(text, /kube_admission_request_duration_seconds\w*\{[^}]*webhook="_unserved"/);
  t.equal(admissionMetrics(registry), metrics, 'one set per registry');
});
