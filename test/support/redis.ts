/**
 * A throwaway Redis (Debian's redis-server) for the stream bridge's tests: on a free port, nothing saved,
 * stopped by the test. `redisServerPath()` is undefined where it is not installed (.ci/run installs it).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { RespConnection } from '../../payloads/stream/resp';

const CANDIDATES = ['/usr/bin/redis-server', '/usr/local/bin/redis-server'];

export function redisServerPath(): string | undefined {
  return CANDIDATES.find((path) => existsSync(path));
}

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

export interface TestRedis {
  url: string;
  stop(): Promise<void>;
}

export async function startRedis(): Promise<TestRedis> {
  const binary = redisServerPath();
  if (binary === undefined) throw new Error('redis-server is not installed (apt-get install redis-server)');
  const port = await freePort();
  const child: ChildProcess = spawn(
    binary,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    { stdio: 'ignore' },
  );
  const url = `redis://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  for (;;) {
    const probe = new RespConnection(url);
    const pong = await probe.command(['PING']).catch(() => undefined);
    probe.close();
    if (pong === 'PONG') break;
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on port ${port} did not answer PING`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    stop: async () => {
      if (child.exitCode !== null) return;
      child.kill('SIGTERM');
      await once(child, 'exit');
    },
  };
}
