/** `pods/<name>/log`: the container output the local kubelet captured, read once or followed. */

export interface PodLogOptions {
  container?: string;
  previous: boolean;
  tailLines?: number;
}

/** What the log source answers: the text, or why there is none (a 400 for kubectl to print). */
export type PodLogText = { text: string } | { error: string };

export interface PodLogSource {
  read(namespace: string, pod: string, options: PodLogOptions): PodLogText;
  /** Streams new output until the container ends or the returned function is called. */
  follow(namespace: string, pod: string, options: PodLogOptions, write: (chunk: string) => void, end: () => void): () => void;
}

export function podLogOptions(query: URLSearchParams): PodLogOptions {
  const tail = query.get('tailLines');
  return {
    container: query.get('container') ?? undefined,
    previous: query.get('previous') === 'true',
    tailLines: tail === null ? undefined : Math.max(0, Number(tail)),
  };
}
