// Comments and docs name no package mirror or registry host: which mirror a
// machine uses is that machine's business, and scripts read it from the machine's own
// configuration (scripts/base-image.sh asks apt). The hosts are read the same way here, from apt's
// sources and npm's configuration, so this test names none either.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import t from 'tap';
import { cleanEnvironment } from './support/tools/run-command.js';

const root = new URL('../', import.meta.url);

/** Host names of the package sources this machine is configured with (apt's and npm's). */
function configuredPackageHosts(): string[] {
  const hosts = new Set<string>();
  const fromUrl = (url: string): void => {
    try {
      const host = new URL(url).hostname;
      if (host !== '' && host !== 'localhost' && !/^[\d.]+$/.test(host)) hosts.add(host.toLowerCase());
    } catch {
      // not a URL: nothing to add
    }
  };
  const apt = execFileSync('apt-cache', ['policy'], { encoding: 'utf8', timeout: 30_000 });
  for (const match of apt.matchAll(/\bhttps?:\/\/[^\s]+/g)) fromUrl(match[0]);
  const registry = execFileSync('npm', ['config', 'get', 'registry'], { encoding: 'utf8', timeout: 30_000, env: cleanEnvironment() }).trim();
  fromUrl(registry);
  return [...hosts];
}

/** Tracked text files: what the repository says (the lock file is npm's record, not prose). */
function trackedTextFiles(): string[] {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8', timeout: 30_000 }).split('\0');
  return files.filter((file) => file !== '' && file !== 'package-lock.json' && !/\.(png|jpe?g|gif|ico|tgz|gz)$/.test(file));
}

const hosts = configuredPackageHosts();
t.ok(hosts.length > 0, `the machine names its package sources (${hosts.length} host(s) found)`);

t.test('no tracked file names a package host this machine is configured with', async (t) => {
  const offenders: string[] = [];
  const files = trackedTextFiles();
  for (const file of files) {
    let text: string;
    try {
      text = readFileSync(new URL(file, root), 'utf8').toLowerCase();
    } catch {
      continue; // deleted in the work tree, not yet from the index
    }
    // Which host is left out of the message on purpose: test output ends up in CI logs.
    hosts.forEach((host, index) => text.includes(host) && offenders.push(`${file} (configured host #${index + 1})`));
  }
  t.ok(files.length > 100, `${files.length} tracked files read`);
  t.same(offenders, [], 'files naming a package host: read it from the machine\'s configuration instead');
});
