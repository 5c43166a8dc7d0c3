// BENCHMARKS.md reads current first (issue 27): today's figures, one table per area, each naming
// its date, Node version and command; then how to reproduce and what the figures mean; the
// history last, a line per change, not a log of runs.
import { readFileSync } from 'node:fs';
import t from 'tap';

const text = readFileSync(new URL('../BENCHMARKS.md', import.meta.url), 'utf8');
const sections = text.split(/\n(?=## )/).slice(1);
const titles = sections.map((s) => s.slice(3, s.indexOf('\n')));

t.test('the order: today, how to reproduce, what it means, history last', async (t) => {
  const at = (title: string): number => titles.indexOf(title);
  t.ok(at("Today's figures") >= 0, "a section of today's figures");
  t.ok(at("Today's figures") < at('How to reproduce'), 'today first, then how to reproduce');
  t.ok(at('How to reproduce') < at('What each figure means'), 'then what each figure means');
  t.equal(titles.at(-1), 'History', 'the history last');
  for (const title of titles.slice(0, at("Today's figures"))) t.match(title, /^Issue \d+/, `"${title}": only new issue sections come before today's figures`);
});

t.test("every area of today's figures names its date, Node version and command, and has a table", async (t) => {
  const today = sections[titles.indexOf("Today's figures")] ?? '';
  const areas = today.split(/\n(?=### )/).slice(1);
  t.ok(areas.length >= 6, `${areas.length} areas`);
  for (const area of areas) {
    const name = area.slice(4, area.indexOf('\n'));
    t.match(area, /\b20\d\d-\d\d-\d\d\b/, `${name}: a date`);
    t.match(area, /Node v\d+\.\d+\.\d+/, `${name}: the Node version`);
    t.match(area, /npm run (bench|hostile|soak)/, `${name}: the command`);
    t.match(area, /\n\|[^\n]+\|\n\|[-:| ]+\|\n/, `${name}: a table`);
  }
});

t.test('the history is a short list, a line or so per change', async (t) => {
  const history = sections.at(-1) ?? '';
  const items = history.split('\n- ').slice(1);
  t.ok(items.length >= 5, `${items.length} changes`);
  t.notMatch(history, /\n\|/, 'no tables in the history');
  for (const item of items) t.ok(item.split('\n').length <= 4, `short: "${item.slice(0, 60)}..."`);
});
