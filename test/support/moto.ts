/**
 * A local S3-compatible server for the S3 store tests: moto's (`pip install 'moto[server]'`, which `.ci/run`
 * installs when pip is there). Without `moto_server` on the PATH those tests are skipped, with a note.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import type { S3PayloadSettings } from '../../contracts/config/payloads';
import { whichSync } from '../../devserver/temporal-cli';
import { freePort } from '../../devserver/temporal-server';
import { available } from './required';

/** The environment the settings of `startMoto` name their credentials in. */
export const MOTO_CREDENTIALS = { RUNS_KEY_ID: 'testing', RUNS_SECRET: 'testing' };

/** Why moto's server cannot run here, or undefined when it can. */
export function motoMissing(): string | undefined {
  return whichSync('moto_server') ? undefined : "no moto_server on the PATH (pip install 'moto[server]')";
}

/**
 * `describe` when moto_server is on the PATH, else `describe.skip` after saying which `suite` is skipped (a
 * failure with SUBAGENTS_REQUIRE_S3=1: test/support/required.ts).
 */
export function describeWithMoto(suite: string): jest.Describe {
  return available('s3', suite, motoMissing()) ? describe : describe.skip;
}

export interface MotoServer {
  /** Payload settings for the bucket `agent-runs`, prefix `payloads/`, credentials in MOTO_CREDENTIALS. */
  settings: S3PayloadSettings;
  /** A client with the server's credentials, to look at what the store wrote. */
  admin: S3Client;
  stop(): Promise<void>;
}

/** Starts moto_server on a free port, waits until it answers, and creates the bucket `agent-runs`. */
export async function startMoto(): Promise<MotoServer> {
  const motoServer = whichSync('moto_server');
  if (!motoServer) throw new Error('moto_server is not on the PATH');
  const port = await freePort();
  const endpoint = `http://127.0.0.1:${port}`;
  const moto: ChildProcess = spawn(motoServer, ['-H', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  const stop = async (): Promise<void> => {
    if (moto.exitCode !== null || moto.signalCode !== null) return;
    const exited = once(moto, 'exit');
    moto.kill('SIGTERM');
    await exited;
  };
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      await fetch(endpoint);
      break;
    } catch (err) {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`moto_server did not answer on ${endpoint}: ${err}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  const settings: S3PayloadSettings = {
    endpoint,
    bucket: 'agent-runs',
    region: 'us-east-1',
    prefix: 'payloads/',
    access_key_id_env: 'RUNS_KEY_ID',
    secret_access_key_env: 'RUNS_SECRET',
    force_path_style: true,
  };
  const admin = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
  });
  await admin.send(new CreateBucketCommand({ Bucket: settings.bucket }));
  return {
    settings,
    admin,
    stop: async () => {
      admin.destroy();
      await stop();
    },
  };
}
