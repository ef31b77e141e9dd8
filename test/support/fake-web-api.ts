/**
 * A local stand-in for a web provider's API (Tavily, Brave, Jina's reader, a web page …): routes answer with
 * planned responses, and every request is kept (method, path, query, headers, body) for the test to check its
 * shape and its key header.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SeenRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface FakeResponse {
  status?: number;
  json?: unknown;
  text?: string;
  headers?: Record<string, string>;
}

/** `METHOD /path` → what it answers (a function sees the request). */
export type Routes = Record<string, FakeResponse | ((request: SeenRequest) => FakeResponse)>;

export class FakeWebApi {
  readonly requests: SeenRequest[] = [];

  private readonly server: Server;

  private constructor(private routes: Routes) {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'http://fake');
        const seen: SeenRequest = {
          method: req.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        };
        this.requests.push(seen);
        const route = this.routes[`${seen.method} ${seen.path}`];
        const answer: FakeResponse =
          route === undefined
            ? { status: 404, text: 'no such route' }
            : typeof route === 'function'
              ? route(seen)
              : route;
        const body = answer.json !== undefined ? JSON.stringify(answer.json) : (answer.text ?? '');
        res.writeHead(answer.status ?? 200, {
          'content-type': answer.json !== undefined ? 'application/json' : 'text/plain; charset=utf-8',
          ...answer.headers,
        });
        res.end(body);
      });
    });
  }

  static async start(routes: Routes = {}): Promise<FakeWebApi> {
    const fake = new FakeWebApi(routes);
    await new Promise<void>((resolve) => fake.server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  /** Replaces the routes (the requests seen so far stay). */
  answer(routes: Routes): void {
    this.routes = routes;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}
