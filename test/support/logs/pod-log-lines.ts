/** The lines of every container the local cluster's kubelet runs (the compiled server), read as log-lines.ts reads a ChildServer's. */
import type { PodLogs } from '../../../local-cluster/cluster/kubelet/container-logs.js';
import { readLogLine } from './log-lines.js';

/** From now on, every new container run's output is read line by line; other output (not JSON) passes. */
export function readPodLogLines(logs: PodLogs): void {
  const newRun = logs.newRun.bind(logs);
  logs.newRun = (namespace, pod, container) => {
    const log = newRun(namespace, pod, container);
    let pending = '';
    log.follow(
      (chunk) => {
        pending += chunk;
        const lines = pending.split('\n');
        pending = lines.pop() ?? '';
        for (const line of lines) readLogLine(line, `the container ${container} of the Pod ${namespace}/${pod}`);
      },
      () => undefined,
    );
    return log;
  };
}
