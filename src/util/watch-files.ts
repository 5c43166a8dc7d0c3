/**
 * Watches a set of files in one directory for content changes, the way Kubernetes updates
 * Secret and ConfigMap volumes: kubelet writes a new timestamped directory and atomically swaps
 * the `..data` symlink, so the visible files (symlinks into `..data`) change all at once through
 * a rename in the watched directory. Plain in-place rewrites are seen too. fs.watch gives quick
 * notice; a poll that compares content digests is the fallback, because fs events are lost on
 * some file systems and across a replaced directory. Only real content changes are reported.
 */
import { watch, type FSWatcher } from 'node:fs';
import { readFile, readlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { isAbortError, sleep } from './abort.js';

export interface FileSnapshot {
  /** File name -> content; undefined when the file cannot be read (absent, dangling symlink). */
  readonly contents: ReadonlyMap<string, Buffer | undefined>;
  /** Digest over names and contents: equal digests mean equal content. */
  readonly digest: string;
}

export interface WatchFilesOptions {
  dir: string;
  /** Names relative to `dir`; symlinks are followed. */
  files: readonly string[];
  /** Interval of the fallback poll. */
  pollIntervalMs: number;
  /** Aborting stops both fs.watch and the poll. */
  signal: AbortSignal;
  /** Called once per settled change, never concurrently with itself. */
  onChange: (snapshot: FileSnapshot) => void | Promise<void>;
  /** Digest of the content the caller already holds (from readSnapshot); changes are relative to it. */
  baselineDigest?: string;
  /**
   * A change is reported only after two reads `settleMs` apart agree, so a burst of writes
   * (tls.crt, then tls.key) is reported once, with its final content. Default 50.
   */
  settleMs?: number;
  /** Default true. False leaves the poll alone (tests use it to exercise the fallback). */
  useFsEvents?: boolean;
  /** Failures of fs.watch or of onChange; the watch goes on regardless. */
  onError?: (error: unknown) => void;
}

export interface FileWatch {
  /** Resolves once the signal aborted and every handle is released. */
  readonly closed: Promise<void>;
}

/** Most consecutive unstable reads before a change is reported anyway (a writer that never stops). */
const MAX_SETTLE_ROUNDS = 20;

/** Reads of a set that a `..data` swap tore apart before one read it whole (each takes well under a millisecond). */
const MAX_SNAPSHOT_READS = 5;

/** Where kubelet's atomic writer points `..data` now; undefined in a directory it does not manage. */
const publishedVersion = (dir: string): Promise<string | undefined> => readlink(join(dir, '..data')).catch(() => undefined);

export type ReadContent = (path: string) => Promise<Buffer>;

/**
 * Reads `files` from `dir` (following symlinks) into a snapshot with a content digest. The files
 * are read one by one, so a volume update between two reads would pair one version's tls.crt with
 * the next one's tls.key (a start would fail on it): where kubelet publishes through `..data`, the
 * set is read again until `..data` pointed at the same version before and after (bounded).
 */
export async function readSnapshot(dir: string, files: readonly string[], read: ReadContent = readFile): Promise<FileSnapshot> {
  for (let attempt = 1; ; attempt++) {
    const before = await publishedVersion(dir);
    const contents = new Map<string, Buffer | undefined>();
    for (const name of files) contents.set(name, await read(join(dir, name)).catch(() => undefined));
    if (attempt >= MAX_SNAPSHOT_READS || (await publishedVersion(dir)) === before) return snapshotOf(contents);
  }
}

/** The snapshot of contents already read (in `files` order): the same digest readSnapshot gives for them. */
export function snapshotOf(contents: ReadonlyMap<string, Buffer | undefined>): FileSnapshot {
  const hash = createHash('sha256');
  for (const [name, content] of contents) {
    hash.update(`${name}\0${content === undefined ? -1 : content.length}\0`);
    if (content) hash.update(content);
  }
  return { contents, digest: hash.digest('hex') };
}

/** Starts watching; see WatchFilesOptions. Never throws: a missing directory is polled until it appears. */
export function watchFiles(options: WatchFilesOptions): FileWatch {
  const watcher = new ContentWatcher(options);
  return { closed: watcher.run() };
}

class ContentWatcher {
  private lastDigest: string | undefined;
  private fsWatcher: FSWatcher | undefined;
  private checking: Promise<void> | undefined;
  private recheck = false;
  private readonly settleMs: number;

  constructor(private readonly options: WatchFilesOptions) {
    this.lastDigest = options.baselineDigest;
    this.settleMs = options.settleMs ?? 50;
  }

  async run(): Promise<void> {
    const { signal } = this.options;
    if (signal.aborted) return;
    this.ensureFsWatcher();
    if (this.lastDigest === undefined) this.trigger();
    const poll = setInterval(() => {
      this.ensureFsWatcher();
      this.trigger();
    }, this.options.pollIntervalMs);
    await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    clearInterval(poll);
    this.closeFsWatcher();
    await this.checking;
  }

  /** Starts a check, or asks the running one to look again when it is done. */
  private trigger(): void {
    if (this.options.signal.aborted) return;
    if (this.checking) {
      this.recheck = true;
      return;
    }
    this.checking = this.checkUntilQuiet().finally(() => {
      this.checking = undefined;
    });
  }

  private async checkUntilQuiet(): Promise<void> {
    do {
      this.recheck = false;
      try {
        await this.checkOnce();
      } catch (error) {
        if (isAbortError(error) || this.options.signal.aborted) return;
        this.options.onError?.(error);
      }
    } while (this.recheck && !this.options.signal.aborted);
  }

  private async checkOnce(): Promise<void> {
    const { dir, files, signal } = this.options;
    let snapshot = await readSnapshot(dir, files);
    for (let round = 0; snapshot.digest !== this.lastDigest; round++) {
      await sleep(this.settleMs, signal);
      const again = await readSnapshot(dir, files);
      if (again.digest === snapshot.digest || round >= MAX_SETTLE_ROUNDS) {
        this.lastDigest = again.digest;
        await this.options.onChange(again);
        return;
      }
      snapshot = again;
    }
  }

  private ensureFsWatcher(): void {
    if (this.fsWatcher || this.options.useFsEvents === false || this.options.signal.aborted) return;
    try {
      const fsWatcher = watch(this.options.dir, { persistent: true }, () => this.trigger());
      fsWatcher.on('error', (error) => {
        // The directory went away or the watch broke: the poll carries on and re-establishes it.
        this.options.onError?.(error);
        if (this.fsWatcher === fsWatcher) this.closeFsWatcher();
      });
      this.fsWatcher = fsWatcher;
    } catch {
      // No directory yet (or no inotify): the poll covers it and retries the watch each tick.
      this.fsWatcher = undefined;
    }
  }

  private closeFsWatcher(): void {
    this.fsWatcher?.close();
    this.fsWatcher = undefined;
  }
}

/**
 * A file watch owned by a long-lived object: started at most once (a second start is ignored),
 * stopped from outside with stop(), which resolves when every handle is released.
 */
export class OwnedFileWatch {
  #running: { controller: AbortController; closed: Promise<void> } | undefined;

  start(signal: AbortSignal, options: Omit<WatchFilesOptions, 'signal'>): void {
    if (this.#running) return;
    const controller = new AbortController();
    const { closed } = watchFiles({ ...options, signal: AbortSignal.any([signal, controller.signal]) });
    this.#running = { controller, closed };
  }

  async stop(): Promise<void> {
    const running = this.#running;
    this.#running = undefined;
    running?.controller.abort();
    await running?.closed;
  }
}
