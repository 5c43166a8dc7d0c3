/** Memory and open descriptors of a child process, read from /proc (Linux). */
import { readFile, readdir, readlink } from 'node:fs/promises';

export interface ProcessSample {
  atMs: number;
  rssKiB: number;
  /** Entries of /proc/<pid>/fd: files, pipes, sockets, the event loop's own descriptors. */
  fds: number;
  sockets: number;
}

export async function sampleProcess(pid: number, atMs: number): Promise<ProcessSample | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const rss = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    if (rss === undefined) return undefined; // a zombie: exited, not yet reaped
    const rssKiB = Number(rss);
    const entries = await readdir(`/proc/${pid}/fd`);
    const targets = await Promise.all(entries.map((fd) => readlink(`/proc/${pid}/fd/${fd}`).catch(() => '')));
    return { atMs, rssKiB, fds: entries.length, sockets: targets.filter((t) => t.startsWith('socket:')).length };
  } catch {
    return undefined; // the process is gone
  }
}
