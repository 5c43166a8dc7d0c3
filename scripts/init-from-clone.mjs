#!/usr/bin/env node
/**
 * `npm run init -- DIR [--name NAME]`: a new project of typed webhooks from a clone of this
 * repository, before (or without) a release on the npm registry. Packs the clone (`npm pack`,
 * whose prepack compiles the package) and runs `init DIR --tarball <that tarball>`, so the
 * project depends on the tarball, holds it beside its package.json and builds its image with it.
 * Relative folders are taken from where npm was run.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import process, { stderr } from 'node:process';
import { fileURLToPath, URL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const { name, version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
// npm run sets npm_execpath to the npm that runs the script: the same npm packs.
const npm = process.env.npm_execpath ? [process.execPath, process.env.npm_execpath] : ['npm'];

/** Runs a command with this terminal until `timeoutMs`; its exit code, or 1 when it could not start, was killed or timed out. */
function run(argv, cwd, timeoutMs) {
  const result = spawnSync(argv[0], argv.slice(1), { cwd, stdio: 'inherit', timeout: timeoutMs, killSignal: 'SIGKILL' });
  if (result.error) stderr.write(`${argv.join(' ')}: ${result.error.message}\n`);
  else if (result.signal) stderr.write(`${argv.join(' ')}: killed by ${result.signal}\n`);
  return result.status ?? 1;
}

const packed = mkdtempSync(join(tmpdir(), 'kube-admission-server-pack-'));
try {
  // The pack compiles the package (prepack); 10 minutes is far beyond that on a loaded machine.
  let code = run([...npm, 'pack', '--silent', '--pack-destination', packed], root, 600_000);
  const tarball = join(packed, `${name}-${version}.tgz`);
  if (code === 0 && !existsSync(tarball)) {
    stderr.write(`npm pack wrote no ${name}-${version}.tgz into ${packed}\n`);
    code = 1;
  }
  if (code === 0) code = run([process.execPath, join(root, 'dist', 'src', 'main.js'), 'init', ...process.argv.slice(2), '--tarball', tarball], process.env.INIT_CWD ?? process.cwd(), 120_000);
  process.exitCode = code;
} finally {
  rmSync(packed, { recursive: true, force: true });
}
