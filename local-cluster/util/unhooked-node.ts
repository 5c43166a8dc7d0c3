/**
 * Node without tap's hooks, for processes that are the tests' environment rather than code under
 * test (the local cluster, its Pods), and for the compiled server, which must run as it ships.
 * tap's processinfo wraps every spawn of the test process and puts its module loader into
 * NODE_OPTIONS whatever env the caller gives, and a process under it does the same for its own
 * children; the loader then records every module a process loads (a server started two to three
 * times slower under it, with about three times the RSS). `env` sets NODE_OPTIONS back to what the
 * caller asked for (or unsets it) between the spawn and the exec: the pid, signals and exit status
 * are the node process's own.
 */
export function unhookedNode(args: readonly string[], nodeOptions?: string): { command: string; args: string[] } {
  const options = nodeOptions === undefined ? ['-u', 'NODE_OPTIONS'] : [`NODE_OPTIONS=${nodeOptions}`];
  return { command: '/usr/bin/env', args: [...options, process.execPath, ...args] };
}
