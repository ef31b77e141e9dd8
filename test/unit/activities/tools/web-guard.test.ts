/**
 * The address guard of a direct `web_fetch`: a host name is judged by every address it resolves to, again on
 * every redirect, and the connection goes to the address judged. The test's lookup plays DNS; its own server
 * listens on 127.0.0.1, which the policy of the redirect tests lets pass (as if it were a public host) so that
 * the hop after it is what gets judged.
 */
import { createToolActivities, machineProbes } from '../../../../activities/tools';
import { isNonPublicAddress, type HostLookup } from '../../../../activities/tools/web';
import { parseConfig } from '../../../../contracts/config';
import { DEFAULT_SANDBOX, type ToolCallResult } from '../../../../contracts/tools';
import { FakeWebApi } from '../../../support/fake-web-api';

const probes = machineProbes();
let site: FakeWebApi;
beforeAll(async () => {
  site = await FakeWebApi.start();
});
afterAll(() => site.close());
beforeEach(() => site.requests.splice(0));

/** A DNS of names the test chooses; every question is counted. */
function dns(names: Record<string, string[]>): HostLookup & { asked: string[] } {
  const asked: string[] = [];
  const lookup = async (host: string) => {
    asked.push(host);
    const addresses = names[host];
    if (addresses === undefined) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({
      address,
      family: address.includes(':') ? (6 as const) : (4 as const),
    }));
  };
  return Object.assign(lookup, { asked });
}

/** Everything the guard refuses, except the test server's own address. */
const siteCountsAsPublic = (address: string) => address !== '127.0.0.1' && isNonPublicAddress(address);

function fetchUrl(
  url: string,
  lookup: HostLookup,
  options: { refused?: (address: string) => boolean; allowPrivate?: boolean } = {},
): Promise<ToolCallResult> {
  const entry = {
    name: 'web_fetch',
    use: 'direct',
    ...(options.allowPrivate && { allow_private_addresses: true }),
  };
  const { config } = parseConfig({ tools: [entry] });
  const { executeToolCall } = createToolActivities({
    probes,
    web: { entries: config.tools ?? [], lookup, ...(options.refused && { refused: options.refused }) },
  });
  return executeToolCall({
    call: { id: 'call-1', name: 'web_fetch', args: JSON.stringify({ url }) },
    workspace: '/tmp',
    allowed_tools: ['web_fetch'],
    sandbox: DEFAULT_SANDBOX,
  });
}

it('refuses a host name that resolves to 127.0.0.1, connecting nowhere', async () => {
  const lookup = dns({ 'innocent.test': ['127.0.0.1'] });
  const result = await fetchUrl(`http://innocent.test:${site.port}/`, lookup);
  expect(result).toMatchObject({ is_error: true });
  expect(result.content).toContain(
    'innocent.test resolves to 127.0.0.1, a private, loopback or link-local address',
  );
  expect(site.requests).toEqual([]);
});

it('refuses a name when any one of its addresses is private', async () => {
  const lookup = dns({ 'mixed.test': ['93.184.216.34', 'fd00::1'] });
  const result = await fetchUrl('http://mixed.test/', lookup);
  expect(result.content).toContain('mixed.test resolves to fd00::1');
});

it('refuses IPv6 loopback and an IPv4-mapped private address written as literals', async () => {
  const lookup = dns({});
  expect((await fetchUrl('http://[::1]/', lookup)).content).toContain(
    'is a private, loopback or link-local address',
  );
  expect((await fetchUrl('http://[::ffff:10.0.0.1]/', lookup)).is_error).toBe(true);
  expect(lookup.asked).toEqual([]);
});

it('refuses a redirect into 10.0.0.0/8, after fetching only the first hop', async () => {
  site.answer({ 'GET /start': { status: 302, headers: { location: 'http://10.0.0.1/admin' } } });
  const lookup = dns({ 'public.test': ['127.0.0.1'] });
  const result = await fetchUrl(`http://public.test:${site.port}/start`, lookup, {
    refused: siteCountsAsPublic,
  });
  expect(result).toMatchObject({ is_error: true });
  expect(result.content).toContain('refusing to fetch http://10.0.0.1/admin: 10.0.0.1 is a private');
  expect(site.requests.map((r) => r.path)).toEqual(['/start']);
});

it('refuses a redirect to a name that resolves into 10.0.0.0/8', async () => {
  site.answer({ 'GET /start': { status: 301, headers: { location: 'http://intranet.test/' } } });
  const lookup = dns({ 'public.test': ['127.0.0.1'], 'intranet.test': ['10.20.30.40'] });
  const result = await fetchUrl(`http://public.test:${site.port}/start`, lookup, {
    refused: siteCountsAsPublic,
  });
  expect(result.content).toContain('intranet.test resolves to 10.20.30.40');
  expect(lookup.asked).toEqual(['public.test', 'intranet.test']);
});

it('connects to the address it judged, asking DNS once a hop, and reads the page as text', async () => {
  site.answer({
    'GET /page': {
      text: '<html><head><title>Hello page</title><script>var x = 1;</script></head><body><p>First &amp; only</p></body></html>',
      headers: { 'content-type': 'text/html; charset=utf-8' },
    },
  });
  const lookup = dns({ 'public.test': ['127.0.0.1'] });
  const result = await fetchUrl(`http://public.test:${site.port}/page`, lookup, {
    refused: siteCountsAsPublic,
  });
  expect(result).toMatchObject({ is_error: false, content: '# Hello page\n\nFirst & only' });
  expect(site.requests[0]?.headers.host).toBe(`public.test:${site.port}`);
  expect(lookup.asked).toEqual(['public.test']);
});

it('follows a redirect it may follow, judging the next hop', async () => {
  site.answer({
    'GET /old': { status: 302, headers: { location: '/new' } },
    'GET /new': { text: 'moved here' },
  });
  const lookup = dns({ 'public.test': ['127.0.0.1'] });
  const result = await fetchUrl(`http://public.test:${site.port}/old`, lookup, {
    refused: siteCountsAsPublic,
  });
  expect(result).toMatchObject({ is_error: false, content: 'moved here' });
  expect(lookup.asked).toEqual(['public.test', 'public.test']);
});

it('reaches a private address when the tool’s config allows it', async () => {
  site.answer({ 'GET /internal': { text: 'internal wiki' } });
  const lookup = dns({ 'wiki.test': ['127.0.0.1'] });
  const result = await fetchUrl(`http://wiki.test:${site.port}/internal`, lookup, { allowPrivate: true });
  expect(result).toMatchObject({ is_error: false, content: 'internal wiki' });
});
