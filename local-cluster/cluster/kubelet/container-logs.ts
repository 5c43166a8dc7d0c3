/** What `kubectl logs` reads: each container's output, the current run and the previous one. */
import type { PodLogOptions, PodLogSource, PodLogText } from '../../fake-apiserver/index.js';

/** A container's output is capped like kubelet's log rotation would cap it. */
const MAX_BYTES = 2 * 1024 * 1024;

export class ContainerLog {
  #text = '';
  #ended = false;
  readonly #followers = new Set<{ write: (chunk: string) => void; end: () => void }>();

  append(chunk: string): void {
    this.#text += chunk;
    if (this.#text.length > MAX_BYTES) this.#text = this.#text.slice(this.#text.length - MAX_BYTES);
    for (const follower of this.#followers) follower.write(chunk);
  }

  end(): void {
    this.#ended = true;
    for (const follower of this.#followers) follower.end();
    this.#followers.clear();
  }

  read(tailLines?: number): string {
    if (tailLines === undefined) return this.#text;
    const lines = this.#text.split('\n');
    const last = lines.at(-1) === '' ? lines.slice(0, -1) : lines;
    const tail = last.slice(Math.max(0, last.length - tailLines));
    return tail.length === 0 ? '' : `${tail.join('\n')}\n`;
  }

  follow(write: (chunk: string) => void, end: () => void): () => void {
    if (this.#ended) {
      end();
      return () => undefined;
    }
    const follower = { write, end };
    this.#followers.add(follower);
    return () => this.#followers.delete(follower);
  }
}

interface ContainerRuns {
  current?: ContainerLog;
  previous?: ContainerLog;
}

export class PodLogs implements PodLogSource {
  /** `<namespace>/<pod>` -> container name -> runs. */
  readonly #pods = new Map<string, Map<string, ContainerRuns>>();

  /** A new run of a container: the last one becomes `previous`. */
  newRun(namespace: string, pod: string, container: string): ContainerLog {
    const key = `${namespace}/${pod}`;
    const containers = this.#pods.get(key) ?? new Map<string, ContainerRuns>();
    this.#pods.set(key, containers);
    const runs = containers.get(container) ?? {};
    const log = new ContainerLog();
    containers.set(container, { previous: runs.current, current: log });
    return log;
  }

  forget(namespace: string, pod: string): void {
    this.#pods.delete(`${namespace}/${pod}`);
  }

  private pick(namespace: string, pod: string, options: PodLogOptions): ContainerLog | { error: string } {
    const containers = this.#pods.get(`${namespace}/${pod}`);
    if (!containers) return { error: `container ${JSON.stringify(options.container ?? '')} in pod ${JSON.stringify(pod)} is waiting to start: ContainerCreating` };
    const names = [...containers.keys()];
    const name = options.container ?? (names.length === 1 ? names[0] : undefined);
    if (name === undefined) return { error: `a container name must be specified for pod ${pod}, choose one of: [${names.join(' ')}]` };
    const runs = containers.get(name);
    if (!runs) return { error: `container ${name} is not valid for pod ${pod}` };
    const log = options.previous ? runs.previous : runs.current;
    if (!log) return { error: options.previous ? `previous terminated container "${name}" in pod "${pod}" not found` : `container "${name}" in pod "${pod}" is waiting to start` };
    return log;
  }

  read(namespace: string, pod: string, options: PodLogOptions): PodLogText {
    const log = this.pick(namespace, pod, options);
    return 'error' in log ? log : { text: log.read(options.tailLines) };
  }

  follow(namespace: string, pod: string, options: PodLogOptions, write: (chunk: string) => void, end: () => void): () => void {
    const log = this.pick(namespace, pod, options);
    if ('error' in log) {
      end();
      return () => undefined;
    }
    return log.follow(write, end);
  }
}
