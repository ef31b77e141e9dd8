/**
 * Which addresses a fetch of a model's URL may reach: public ones only, unless the tool's config says
 * `allow_private_addresses: true`. A host name is judged by every address it resolves to (one private address
 * refuses it), and the connection is then pinned to the address that was judged (guarded-fetch.ts), so a second
 * DNS answer cannot swap it for another.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/** Loopback, private, link-local, unique-local, carrier-grade NAT, unspecified, multicast and reserved ranges. */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
  ['2001:db8::', 32],
] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 one carries (mapped `::ffff:a.b.c.d`, compatible, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /(?:^::(?:ffff:)?|^64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::(?:ffff:)?|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  const sixToFour = /^2002:([0-9a-f]{1,4}):([0-9a-f]{1,4}):/.exec(lower);
  const pair = hex ?? sixToFour;
  if (!pair) return undefined;
  const high = parseInt(pair[1] as string, 16);
  const low = parseInt(pair[2] as string, 16);
  return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
}

/** Whether an IP address is outside the public internet (an IPv6 address carrying a private IPv4 one included). */
export function isNonPublicAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return NON_PUBLIC.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined && NON_PUBLIC.check(v4, 'ipv4')) return true;
  return NON_PUBLIC.check(address, 'ipv6');
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/** How host names are resolved: every address (`dns.lookup` with `all`); a test hands in its own. */
export type HostLookup = (host: string) => Promise<ResolvedAddress[]>;

export const systemLookup: HostLookup = async (host) =>
  (await dnsLookup(host, { all: true, verbatim: true })).map(({ address, family }) => ({
    address,
    family: family === 6 ? 6 : 4,
  }));

/** Which addresses are refused (default: the non-public ones); a test may let its own server's address pass. */
export type AddressPolicy = (address: string) => boolean;

/** A URL's host without IPv6 brackets or the root's trailing dot. */
export function urlHost(url: URL): string {
  return url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '');
}

/** Host names that name this machine or a cloud's metadata service whatever DNS says. */
const LOCAL_NAMES = /^(?:localhost|.*\.localhost|metadata\.google\.internal)$/i;

/**
 * Checks a URL without resolving it (for a URL handed to a reader service, which resolves it itself): the scheme,
 * and a host that is a literal non-public address or a local name. Returns why it is refused, or undefined.
 */
export function lexicalUrlProblem(url: URL, refused: AddressPolicy = isNonPublicAddress): string | undefined {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    return `only http:// and https:// URLs are fetched (not ${url.protocol})`;
  const host = urlHost(url);
  if (LOCAL_NAMES.test(host)) return `${host} names this machine`;
  if (isIP(host) !== 0 && refused(host)) return `${host} is a private, loopback or link-local address`;
  return undefined;
}

/**
 * The address to connect to for this URL's host, checked: every address the name resolves to must be public
 * (unless refused is a policy that lets it pass). Throws a WebRefusal naming the host and the address.
 */
export async function checkedAddress(
  url: URL,
  lookup: HostLookup,
  refused: AddressPolicy,
): Promise<ResolvedAddress> {
  const problem = lexicalUrlProblem(url, refused);
  if (problem !== undefined) throw new WebRefusal(`refusing to fetch ${url.href}: ${problem}`);
  const host = urlHost(url);
  const literal = isIP(host);
  const addresses: ResolvedAddress[] =
    literal === 0 ? await resolveAll(host, lookup) : [{ address: host, family: literal === 6 ? 6 : 4 }];
  const bad = addresses.find(({ address }) => refused(address));
  if (bad !== undefined) {
    throw new WebRefusal(
      `refusing to fetch ${url.href}: ${host} resolves to ${bad.address}, a private, loopback or link-local ` +
        'address (allow_private_addresses: true on the tool allows it)',
    );
  }
  return addresses[0] as ResolvedAddress;
}

async function resolveAll(host: string, lookup: HostLookup): Promise<ResolvedAddress[]> {
  let addresses: ResolvedAddress[];
  try {
    addresses = await lookup(host);
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    throw new WebRefusal(`could not resolve ${host}${typeof code === 'string' ? ` (${code})` : ''}`);
  }
  if (addresses.length === 0) throw new WebRefusal(`could not resolve ${host}`);
  return addresses;
}

/** A URL the guard refuses, or a host that does not resolve: the model is told, nothing is retried. */
export class WebRefusal extends Error {
  override name = 'WebRefusal';
}
