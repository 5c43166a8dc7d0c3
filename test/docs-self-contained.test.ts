// The repository speaks for itself: no tracked file names an issue number (a text says what it
// means, not where it came from), a file outside the repository, a path of the machine it was
// written on, or a package registry's page (a package is named by its name); and every section of
// the API contract a comment cites ("contract 3.7") is one local-cluster/CONTRACT.md has.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const ROOT = fileURLToPath(new URL('../', import.meta.url)).replace(/\/$/, '');

/** The system's own folders, which a doc may name as a container's paths (/tmp/certs, /etc/...). */
const SYSTEM_FOLDERS = new Set(['/tmp', '/var', '/usr', '/opt', '/srv', '/etc', '/root', '/home', '/Users', '/mnt', '/media', '/run']);

/** The folders above the checkout, and a user's home folder: where a machine keeps its files. */
function machinePaths(): string[] {
  const paths = new Set<string>(/^\/(home|Users)\/[^/]+/.test(homedir()) ? [homedir()] : []);
  for (let dir = ROOT; dirname(dir) !== dir; dir = dirname(dir)) paths.add(dir);
  return [...paths].filter((path) => path !== '/' && !SYSTEM_FOLDERS.has(path));
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const RULES: { what: string; pattern: RegExp }[] = [
  { what: 'an issue number', pattern: /\b[Ii]ssues? ?#?\d+|\bissue-\d+|(?:^|[\s([])#\d{2,}\b|\bitems? \d+ (?:of|has|lands?|landed)\b/ },
  { what: 'a file outside the repository', pattern: /APISERVER-(?:CONTRACT)|\b(?:STACK|DESIGN)\.md\b|\.\.\/shared\/|\/shared\/[A-Z]+\.md/ },
  { what: "a package registry's page", pattern: /\b(?:www\.)?(?:npmjs\.(?:com|org)|npm\.im|yarnpkg\.com|unpkg\.com|jsdelivr\.net|pypi\.org|crates\.io)\b/i },
  ...machinePaths().map((path) => ({ what: 'a path of this machine', pattern: new RegExp(`(?:^|[\\s'"\`(=:,])${escape(path)}(?:[/'"\`\\s),:]|$)`, 'm') })),
];

/** What `text` names that the repository must not, as "<line>: <what>". */
function findings(text: string): string[] {
  const found: string[] = [];
  text.split('\n').forEach((line, i) => {
    for (const rule of RULES) if (rule.pattern.test(line)) found.push(`${i + 1}: ${rule.what}: ${line.trim().slice(0, 120)}`);
  });
  return found;
}

/** Tracked text files: what the repository says (the lock file is npm's record, LICENSE the Apache text). */
function trackedTextFiles(): string[] {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 }).split('\0');
  return files.filter((file) => file !== '' && file !== 'package-lock.json' && file !== 'LICENSE' && !/\.(png|jpe?g|gif|ico|tgz|gz)$/.test(file));
}

function readTracked(file: string): string | undefined {
  try {
    return readFileSync(`${ROOT}/${file}`, 'utf8');
  } catch {
    return undefined; // deleted in the work tree, not yet from the index
  }
}

t.test('no tracked file names an issue number, an outside file, a machine path or a registry page', async (t) => {
  const files = trackedTextFiles();
  t.ok(files.length > 100, `${files.length} tracked files read`);
  const offenders = files.flatMap((file) => findings(readTracked(file) ?? '').map((finding) => `${file}:${finding}`));
  t.same(offenders, []);
});

t.test('the check finds each kind', async (t) => {
  const issue = 'iss' + 'ue';
  t.match(findings(`// fixed in ${issue} 22`), [/an issue number/]);
  t.match(findings(`see [the figures](BENCHMARKS.md#${issue}-23-cel)`), [/an issue number/]);
  t.match(findings('closes #' + '123'), [/an issue number/]);
  t.match(findings('(item 6 ' + 'has since landed)'), [/an issue number/]);
  t.match(findings('as APISERVER-' + 'CONTRACT.md 6a says'), [/a file outside the repository/]);
  t.match(findings('(STACK' + '.md)'), [/a file outside the repository/]);
  t.match(findings('[cel-js](https://www.npm' + 'js.com/package/cel-js)'), [/a package registry's page/]);
  // The checkout itself is always one (the folder above it may be a system folder such as /tmp).
  t.match(findings(`node dist/bench/x.js 5 ${ROOT}/bench`), [/a path of this machine/]);
  t.same(findings('PKCS#12, `certs/ca.crt`, /tmp/certs, a cert-manager Issuer issues it, 3 items of 5'), [], 'what only looks like one');
});

t.test('every contract section a comment cites is one of local-cluster/CONTRACT.md', async (t) => {
  const contract = readFileSync(`${ROOT}/local-cluster/CONTRACT.md`, 'utf8');
  const sections = new Set([...contract.matchAll(/^#{2,3} (\d+(?:\.\d+)?)[. ]/gm)].map((m) => m[1] as string));
  t.ok(sections.has('3.7') && sections.has('6'), `${sections.size} sections`);
  let cited = 0;
  for (const file of trackedTextFiles()) {
    for (const match of (readTracked(file) ?? '').matchAll(/\b(?:contract|CONTRACT\.md)(?: sections?)? (\d+(?:\.\d+)?(?:(?:,| and| to) \d+(?:\.\d+)?)*)/g)) {
      for (const section of (match[1] as string).match(/\d+(?:\.\d+)?/g) ?? []) {
        cited++;
        t.ok(sections.has(section), `${file}: "${match[0]}" cites section ${section}`);
      }
    }
  }
  t.ok(cited >= 30, `${cited} citations checked`);
});
