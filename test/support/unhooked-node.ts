/**
 * Node without tap's hooks, for processes that are the tests' environment rather than code under
 * test (the local cluster, its Pods). tap's processinfo wraps every spawn of the test process and
 * puts its module loader into NODE_OPTIONS whatever env the caller gives, and a process under it
 * does the same for its own children; the loader then records every module a process loads (a
 * server started two to three times slower under it). `env -u NODE_OPTIONS` takes it out again
 * between the spawn and the exec: the pid, signals and exit status are the node process's own.
 */
export function unhookedNode(args: readonly string[]): { command: string; args: string[] } {
  return { command: '/usr/bin/env', args: ['-u', 'NODE_OPTIONS', process.execPath, ...args] };
}
