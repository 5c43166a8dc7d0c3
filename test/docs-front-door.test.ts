// The README is a front door: the two commands first, short, and a map that links
// every topic in docs/; each doc says at its top who it is for and what it answers.
import { readdirSync, readFileSync } from 'node:fs';
import t from 'tap';

const read = (path: string): string => readFileSync(new URL(`../${path}`, import.meta.url), 'utf8');
const readme = read('README.md');
const topics = readdirSync(new URL('../docs/', import.meta.url)).filter((name) => name.endsWith('.md'));

t.test('the README opens with the two commands a newcomer needs', async (t) => {
  const firstBlock = readme.slice(readme.indexOf('```sh'), readme.indexOf('```', readme.indexOf('```sh') + 5));
  t.ok(readme.indexOf('```sh') < readme.indexOf('\n## '), 'before the first section');
  t.match(firstBlock, /npm ci && npm start/);
  t.match(firstBlock, /npm ci && npm run setup && npm test/, 'the test command includes the setup of tools the suite needs (scripts/setup.sh)');
});

t.test('the README is a page, not a manual', async (t) => {
  const lines = readme.split('\n').length;
  t.ok(lines <= 150, `${lines} lines (at most 150: the rest belongs in docs/)`);
  for (const section of ['## Try it locally', '## Try it on the local cluster', '## Install in a cluster', '## Documentation']) {
    t.ok(readme.includes(`\n${section}\n`), `has "${section}"`);
  }
  t.match(readme, /kubectl apply -k manifests\/base/, 'install with kustomize');
  t.match(readme, /helm install kube-admission-server charts\/kube-admission-server/, 'install with Helm');
});

t.test("the README's map links every topic in docs/", async (t) => {
  const map = readme.slice(readme.indexOf('\n## Documentation\n'));
  t.ok(topics.length >= 11, `${topics.length} topics`);
  for (const topic of topics) t.ok(map.includes(`](docs/${topic})`), `docs/${topic} is on the map`);
});

t.test('every doc says who it is for and what it answers, right under its title', async (t) => {
  for (const topic of topics) {
    const [title, blank, ...rest] = read(`docs/${topic}`).split('\n');
    t.match(title, /^# \S/, `docs/${topic} starts with its title`);
    t.equal(blank, '', `docs/${topic}: a blank line after the title`);
    const opening = rest.slice(0, rest.indexOf('')).join(' ');
    t.match(opening, /^Who this is for: .+\. It answers .+/, `docs/${topic}: "Who this is for: ... It answers ..." as its first paragraph`);
  }
});

t.test('CONTRIBUTING.md: on the map, its opening, and every folder of src/ on its floors', async (t) => {
  const contributing = read('CONTRIBUTING.md');
  t.ok(readme.includes('](CONTRIBUTING.md)'), 'the README links it');
  t.match(contributing.split('\n')[2] ?? '', /^Who this is for: /);
  const floors = contributing.slice(contributing.indexOf('## The floors'), contributing.indexOf('## Where a change goes'));
  const folders = readdirSync(new URL('../src/', import.meta.url), { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  for (const folder of folders) t.match(floors, new RegExp(`\\b${folder}/`), `src/${folder}/ is on a floor`);
});
