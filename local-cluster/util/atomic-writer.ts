/**
 * Writes a directory the way kubelet updates Secret / ConfigMap volumes (AtomicWriter in
 * kubernetes pkg/volume/util): the payload goes into a fresh `..YYYY_MM_DD_HH_MM_SS.NNNNNNNNN`
 * directory, a `..data_tmp` symlink to it is renamed over `..data` (the one atomic step), the
 * user-visible names are symlinks `name -> ..data/name`, and the previous timestamped directory
 * is removed. An unchanged payload writes nothing, as in kubelet.
 */
import { lstat, mkdir, readFile, readdir, readlink, rename, rm, symlink, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { randomInt } from 'node:crypto';

const DATA_DIR = '..data';
const DATA_TMP = '..data_tmp';

export type Payload = Record<string, string | Buffer>;

export class AtomicWriter {
  constructor(
    readonly targetDir: string,
    /** kubelet's default for Secret volumes is 0644 (defaultMode 420). */
    private readonly fileMode = 0o644,
  ) {}

  /** Returns false when the payload equals what is published (nothing written). */
  async write(payload: Payload, now: Date = new Date()): Promise<boolean> {
    await mkdir(this.targetDir, { recursive: true });
    const oldTsDir = await readlink(join(this.targetDir, DATA_DIR)).catch(() => undefined);
    if (oldTsDir && (await this.samePayload(oldTsDir, payload))) return false;

    const tsDir = await this.newTimestampedDir(now);
    for (const [name, content] of Object.entries(payload)) {
      await writeFile(join(this.targetDir, tsDir, name), content, { mode: this.fileMode });
    }
    const tmpLink = join(this.targetDir, DATA_TMP);
    await rm(tmpLink, { force: true });
    await symlink(tsDir, tmpLink);
    await rename(tmpLink, join(this.targetDir, DATA_DIR));
    await this.linkVisibleNames(Object.keys(payload));
    await this.removeStaleVisibleNames(new Set(Object.keys(payload)));
    if (oldTsDir) await rm(join(this.targetDir, oldTsDir), { recursive: true, force: true });
    return true;
  }

  private async samePayload(tsDir: string, payload: Payload): Promise<boolean> {
    const present = (await readdir(join(this.targetDir, tsDir))).sort();
    if (present.join('\0') !== Object.keys(payload).sort().join('\0')) return false;
    for (const [name, content] of Object.entries(payload)) {
      const current = await readFile(join(this.targetDir, tsDir, name));
      if (!current.equals(Buffer.from(content))) return false;
    }
    return true;
  }

  private async newTimestampedDir(now: Date): Promise<string> {
    const iso = now.toISOString(); // 2026-11-30T01:12:00.000Z
    const stamp = `..${iso.slice(0, 4)}_${iso.slice(5, 7)}_${iso.slice(8, 10)}_${iso.slice(11, 13)}_${iso.slice(14, 16)}_${iso.slice(17, 19)}`;
    for (;;) {
      const name = `${stamp}.${String(randomInt(1e9)).padStart(9, '0')}`;
      try {
        await mkdir(join(this.targetDir, name), { mode: 0o755 });
        return name;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
    }
  }

  private async linkVisibleNames(names: string[]): Promise<void> {
    for (const name of names) {
      const exists = await lstat(join(this.targetDir, name)).then(() => true, () => false);
      if (!exists) await symlink(join(DATA_DIR, name), join(this.targetDir, name));
    }
  }

  private async removeStaleVisibleNames(keep: Set<string>): Promise<void> {
    for (const name of await readdir(this.targetDir)) {
      if (name.startsWith('..') || keep.has(name)) continue;
      const stat = await lstat(join(this.targetDir, name));
      if (stat.isSymbolicLink()) await unlink(join(this.targetDir, name));
    }
  }
}
