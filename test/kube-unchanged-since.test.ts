// How long the API shows a configuration unwritten: its latest managedFields time against the
// answer's Date, both whole seconds on kube-apiserver's clocks (metav1.Time and Go's http.TimeFormat),
// taken on the conservative side of each.
import t from 'tap';
import type { WebhookConfiguration } from '../src/registration/configuration-api.js';
import { lastWrittenAt, unwrittenForAtLeastMs } from '../src/registration/unchanged-since.js';

const at = (time: string): number => Date.parse(time);
const configuration = (times: (string | undefined)[]): WebhookConfiguration => ({
  metadata: { name: 'kas', managedFields: times.map((time, i) => ({ manager: `m${i}`, operation: 'Update', ...(time === undefined ? {} : { time: new Date(time) }) })) },
});

t.test('the latest change of any manager counts: no field of the object changed after it', async (t) => {
  t.equal(lastWrittenAt(configuration(['2026-03-01T10:00:05Z', '2026-03-01T10:00:10Z', '2026-03-01T09:00:00Z'])), at('2026-03-01T10:00:10Z'));
});

t.test('the age is Date less the stamp, less a second for each whole-second stamp and the skew between kube-apiservers', async (t) => {
  const written = configuration(['2026-03-01T10:00:10Z']);
  // The write came at most a second after its stamp; two kube-apiservers' clocks may differ.
  t.equal(unwrittenForAtLeastMs(written, at('2026-03-01T10:00:20Z')), 8000, '10 s less 1 s for the stamp and 1 s for the skew');
  t.ok(unwrittenForAtLeastMs(written, at('2026-03-01T10:00:10Z'))! < 0, 'answered in the second of the write: it proves nothing');
});

t.test('no evidence: no managedFields, an entry without a time, an answer without a Date', async (t) => {
  t.equal(unwrittenForAtLeastMs({ metadata: { name: 'kas' } }, at('2026-03-01T10:00:20Z')), undefined);
  t.equal(unwrittenForAtLeastMs(configuration(['2026-03-01T10:00:10Z', undefined]), at('2026-03-01T10:00:20Z')), undefined);
  t.equal(unwrittenForAtLeastMs(configuration(['2026-03-01T10:00:10Z']), undefined), undefined);
});
