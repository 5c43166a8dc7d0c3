/**
 * Generated material in a local directory (no cluster): ca.crt, ca.key, tls.crt, tls.key, plus
 * ca-bundle.crt for the rollover overlap (and next-ca.crt/next-ca.key while a rollover waits). The directory is created 0700, keys are written 0600,
 * every file atomically (temporary file + rename), so a crash never leaves half a key.
 */
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { MATERIAL_KEYS, PRIVATE_KEY_PARTS, entriesToMaterial, type GeneratedMaterial } from './generated-material.js';
import type { MaterialStore, StoredMaterial, WriteOutcome } from './material-store.js';

export class DirMaterialStore implements MaterialStore {
  readonly description: string;

  constructor(private readonly dir: string) {
    this.description = `directory ${dir}`;
  }

  async read(_signal: AbortSignal): Promise<StoredMaterial | undefined> {
    const entries: Record<string, string | undefined> = {};
    for (const name of Object.values(MATERIAL_KEYS)) {
      entries[name] = await readFile(join(this.dir, name), 'utf8').catch(ignoreMissing);
    }
    const material = entriesToMaterial(entries);
    if (Object.keys(material).length === 0) return undefined;
    // Without a separate bundle file (material from an older layout), the CA alone is the bundle.
    material.caBundlePem ??= material.caCertPem;
    return { material, version: undefined };
  }

  async write(material: GeneratedMaterial, _basis: StoredMaterial | undefined, _signal: AbortSignal): Promise<WriteOutcome> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    for (const part of Object.keys(MATERIAL_KEYS) as (keyof GeneratedMaterial)[]) {
      const mode = PRIVATE_KEY_PARTS.includes(part) ? 0o600 : 0o644;
      const text = material[part];
      // An optional part the material no longer has (the next CA after a rollover) goes away.
      if (text === undefined) await rm(join(this.dir, MATERIAL_KEYS[part]), { force: true });
      else await writeAtomically(join(this.dir, MATERIAL_KEYS[part]), text, mode);
    }
    return 'written';
  }
}

async function writeAtomically(path: string, text: string, mode: number): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, text, { mode, flag: 'wx' });
  await chmod(temporary, mode); // the umask may have narrowed or the mode option been ignored
  await rename(temporary, path);
}

function ignoreMissing(error: NodeJS.ErrnoException): undefined {
  if (error.code === 'ENOENT') return undefined;
  throw error;
}
