/**
 * Whether an ACP provider can serve a run starting now: its command resolves to an executable file, on the
 * PATH the agent would be spawned with, or as a path. Cheap (no agent is spawned) and never throws: a provider
 * that cannot start means no tool for that run, and the reason says why.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { AcpProviderSettings, RemoteProbeResult } from '../../../contracts/remote-subagent';
import { agentEnvironment } from './agent-env';

function isExecutableFile(path: string): boolean {
  try {
    if (!statSync(path).isFile()) return false;
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export async function probeAcpProvider(settings: AcpProviderSettings): Promise<RemoteProbeResult> {
  try {
    const { command } = settings;
    if (command.trim() === '') return { available: false, reason: 'its command is empty' };
    if (command.includes('/')) {
      // A relative path is the workspace's (the agent's cwd), which only a run has: spawning it will tell.
      if (!isAbsolute(command)) return { available: true };
      return isExecutableFile(command)
        ? { available: true }
        : { available: false, reason: `its command ${command} is not an executable file` };
    }
    // spawn looks a bare name up on the PATH of the environment it is given.
    const path = agentEnvironment(settings).PATH ?? '';
    const found = path
      .split(delimiter)
      .filter((dir) => dir !== '')
      .some((dir) => isExecutableFile(join(dir, command)));
    return found
      ? { available: true }
      : { available: false, reason: `its command ${command} is not found on the PATH` };
  } catch (err) {
    return { available: false, reason: (err as Error).message };
  }
}
