/**
 * A small Redis client for what the stream bridge asks (XADD, XREAD, EXPIRE): RESP2 over one TCP (or TLS)
 * connection, commands answered in order. Kept to those few commands so the bridge needs no package; a
 * blocking XREAD takes a connection of its own.
 */
import { connect as connectTcp, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';

export type RespValue = string | number | null | RespValue[] | RedisReplyError;

export class RedisReplyError extends Error {}

interface Waiting {
  resolve: (value: RespValue) => void;
  reject: (err: Error) => void;
}

export class RespConnection {
  readonly #socket: Socket;
  readonly #ready: Promise<void>;
  readonly #waiting: Waiting[] = [];
  #buffer: Buffer = Buffer.alloc(0);
  #closed: Error | undefined;

  constructor(url: string) {
    const parsed = new URL(url);
    const port = Number(parsed.port || 6379);
    const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1') || '127.0.0.1';
    this.#socket =
      parsed.protocol === 'rediss:'
        ? connectTls({ host, port, servername: host })
        : connectTcp({ host, port });
    this.#socket.setNoDelay(true);
    this.#ready = new Promise((resolve, reject) => {
      this.#socket.once(parsed.protocol === 'rediss:' ? 'secureConnect' : 'connect', () => resolve());
      this.#socket.once('error', reject);
    });
    this.#ready.catch(() => undefined);
    this.#socket.on('data', (data: Buffer) => this.#take(data));
    this.#socket.on('error', (err) => this.#fail(err));
    this.#socket.on('close', () =>
      this.#fail(new Error(`the connection to Redis at ${host}:${port} closed`)),
    );
    const password = decodeURIComponent(parsed.password);
    const user = decodeURIComponent(parsed.username);
    const db = parsed.pathname.replace(/^\//, '');
    if (password)
      void this.command(user ? ['AUTH', user, password] : ['AUTH', password]).catch(() => undefined);
    if (db) void this.command(['SELECT', db]).catch(() => undefined);
  }

  /** Sends one command; resolves with its reply (a RedisReplyError reply rejects). */
  async command(args: readonly (string | number)[]): Promise<RespValue> {
    if (this.#closed) throw this.#closed;
    const reply = new Promise<RespValue>((resolve, reject) => this.#waiting.push({ resolve, reject }));
    const parts = [`*${args.length}\r\n`];
    for (const arg of args) {
      const text = String(arg);
      parts.push(`$${Buffer.byteLength(text)}\r\n${text}\r\n`);
    }
    this.#socket.write(parts.join(''));
    // Both awaited together: a connection refused rejects both, and neither is left unhandled.
    const [value] = await Promise.all([reply, this.#ready]);
    if (value instanceof RedisReplyError) throw value;
    return value;
  }

  close(): void {
    this.#socket.destroy();
  }

  #fail(err: Error): void {
    this.#closed ??= err;
    for (const waiting of this.#waiting.splice(0)) waiting.reject(err);
  }

  #take(data: Buffer): void {
    this.#buffer = this.#buffer.length === 0 ? data : Buffer.concat([this.#buffer, data]);
    for (;;) {
      const parsed = parseReply(this.#buffer, 0);
      if (parsed === undefined) return;
      this.#buffer = this.#buffer.subarray(parsed.end);
      this.#waiting.shift()?.resolve(parsed.value);
    }
  }
}

/** One reply from `buffer` at `at`, and where it ends; undefined when it has not all arrived. */
function parseReply(buffer: Buffer, at: number): { value: RespValue; end: number } | undefined {
  const lineEnd = buffer.indexOf('\r\n', at);
  if (lineEnd < 0) return undefined;
  const type = String.fromCharCode(buffer[at]);
  const line = buffer.toString('utf8', at + 1, lineEnd);
  const next = lineEnd + 2;
  switch (type) {
    case '+':
      return { value: line, end: next };
    case '-':
      return { value: new RedisReplyError(line), end: next };
    case ':':
      return { value: Number(line), end: next };
    case '$': {
      const length = Number(line);
      if (length < 0) return { value: null, end: next };
      if (buffer.length < next + length + 2) return undefined;
      return { value: buffer.toString('utf8', next, next + length), end: next + length + 2 };
    }
    case '*': {
      const count = Number(line);
      if (count < 0) return { value: null, end: next };
      const items: RespValue[] = [];
      let end = next;
      for (let i = 0; i < count; i++) {
        const item = parseReply(buffer, end);
        if (item === undefined) return undefined;
        items.push(item.value);
        end = item.end;
      }
      return { value: items, end };
    }
    default:
      throw new Error(`Redis sent a reply this client cannot read (type ${JSON.stringify(type)})`);
  }
}
