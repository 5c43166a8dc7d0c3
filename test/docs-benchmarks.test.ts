// BENCHMARKS.md is a reference: how to run, then a section per benchmark with its current figure,
// the command that reproduces it, its date and Node version. Every part of `npm run bench`
// (bench/run.ts), every npm script that runs a benchmark and every bench script with a command
// line of its own has one; the history is git's and CHANGELOG.md's, not the file's.
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const text = read('BENCHMARKS.md');
const sections = text.split(/\n(?=## )/).slice(1);
const titleOf = (section: string): string => section.slice(3, section.indexOf('\n'));
const titles = sections.map(titleOf);

/** Sections without a figure of their own, each for its reason. */
const WITHOUT_FIGURES: Record<string, string> = {
  'How to run': 'the commands and knobs every section uses',
  'TLS scan': 'a verdict, not a figure: docs/security.md gives it',
};

t.test('how to run first, then one section per benchmark, no history', async (t) => {
  t.equal(titles[0], 'How to run');
  t.notOk(titles.some((title) => /history|today/i.test(title)), 'no history or "today" section: the figures are current, the history is git\'s');
  const lines = text.split('\n').length;
  t.ok(lines <= 320, `${lines} lines (at most about 300)`);
  for (const title of Object.keys(WITHOUT_FIGURES)) t.ok(titles.includes(title), `a section "${title}"`);
});

t.test('every section with figures names its date, Node version and command', async (t) => {
  for (const section of sections.filter((s) => WITHOUT_FIGURES[titleOf(s)] === undefined)) {
    const title = titleOf(section);
    t.match(section, /\b20\d\d-\d\d-\d\d\b/, `${title}: a date`);
    t.match(section, /\bNode\s+v\d+\.\d+\.\d+/, `${title}: the Node version`);
    t.match(section, /`[^`]*(npm run [\w-]+|node dist\/bench\/[\w-]+\.js)[^`]*`/, `${title}: the command`);
  }
});

t.test('every part of npm run bench has a section with its command', async (t) => {
  const parts = [...read('bench/run.ts').matchAll(/wanted\('([\w-]+)'\)/g)].map((m) => m[1] as string);
  t.ok(parts.length >= 10, `${parts.length} parts in bench/run.ts`);
  const howToRun = sections[0] ?? '';
  for (const part of parts) {
    t.match(howToRun, `\`${part}\``, `How to run lists BENCH_ONLY=${part}`);
    const own = sections.slice(1).find((s) => new RegExp(`BENCH_ONLY=([\\w-]+,)*${part}\\b[^\`]*npm run bench`).test(s));
    t.ok(own, `a section runs BENCH_ONLY=${part}`);
  }
});

t.test('every npm script and bench command line that measures has a section', async (t) => {
  const scripts = Object.entries((JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts);
  const benchScripts = scripts.filter(([, command]) => /dist\/bench\//.test(command)).map(([name]) => name);
  t.ok(benchScripts.length >= 5, `${benchScripts.join(', ')}`);
  for (const name of benchScripts) t.match(text, `npm run ${name}`, `npm run ${name} is in BENCHMARKS.md`);
  // A bench file whose opening comment gives its own `node dist/bench/<file>.js` command is one.
  const standalone = readdirSync(new URL('../bench/', import.meta.url))
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.replace(/\.ts$/, ''))
    .filter((name) => read(`bench/${name}.ts`).slice(0, 600).replace(/\s*\n\s*\*\s*/g, ' ').includes(`node dist/bench/${name}.js`));
  t.ok(standalone.length >= 5, `${standalone.join(', ')}`);
  for (const name of standalone) t.match(text, `node dist/bench/${name}.js`, `node dist/bench/${name}.js is in BENCHMARKS.md`);
});
