import { createServer } from 'node:net';

/** Every address, IPv6 and IPv4 alike: Node binds `::` with IPV6_V6ONLY off, so IPv4 clients reach it too. */
export const DUAL_STACK_HOST = '::';
/** Every IPv4 address: what `::` falls back to on a kernel without IPv6. */
export const IPV4_ANY_HOST = '0.0.0.0';

/** What the kernel answers when it has no IPv6 at all (booted with ipv6.disable=1, or built without it). */
const NO_IPV6 = new Set(['EAFNOSUPPORT', 'EPROTONOSUPPORT']);

/** How a wanted host was turned into the one both listeners bind. */
export interface ListenHost {
  host: string;
  /** Set when `::` was asked for and the kernel has no IPv6: the error that said so. */
  fellBackBecause?: string;
}

/**
 * The host to bind: `host` itself, except `::` on a kernel without IPv6, which becomes 0.0.0.0 (the
 * same "every address" with the only family there is). Found out by binding a throwaway socket to
 * `::` on port 0 once, before either listener, so both bind the same host and neither has to be
 * listened twice.
 */
export async function resolveListenHost(host: string): Promise<ListenHost> {
  if (host !== DUAL_STACK_HOST) return { host };
  const refusal = await new Promise<NodeJS.ErrnoException | undefined>((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => resolve(error));
    probe.listen({ host: DUAL_STACK_HOST, port: 0 }, () => probe.close(() => resolve(undefined)));
  });
  if (refusal === undefined) return { host };
  if (refusal.code !== undefined && NO_IPV6.has(refusal.code)) return { host: IPV4_ANY_HOST, fellBackBecause: `${refusal.code}: ${refusal.message}` };
  // Anything else (no free port at all, a seccomp filter) is no statement about IPv6: the real listen reports it.
  return { host };
}
