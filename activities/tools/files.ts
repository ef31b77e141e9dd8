import { constants } from 'node:fs';
import { mkdir, open } from 'node:fs/promises';
import * as path from 'node:path';
import { ToolError } from './tool-context';
import { fileError, type WorkspacePath } from './workspace';

/** Larger files are refused rather than loaded whole into the worker's memory. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;
const BINARY_SNIFF_BYTES = 8000;

/** Reads a UTF-8 text file; binary and oversized files are refused with a message saying so. */
export async function readTextFile(target: WorkspacePath): Promise<string> {
  try {
    // O_NOFOLLOW: the path was checked link-free, and must not become a link between check and open.
    const handle = await open(target.real, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      const stats = await handle.stat();
      if (stats.isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
      if (stats.size > MAX_FILE_BYTES) {
        throw new ToolError(
          `"${target.requested}" is ${stats.size} bytes, more than the ${MAX_FILE_BYTES} the file tools handle; ` +
            'look at parts of it with bash (head, sed -n, grep -n) if bash is available',
        );
      }
      const bytes = await handle.readFile();
      if (bytes.subarray(0, BINARY_SNIFF_BYTES).includes(0)) {
        throw new ToolError(
          `"${target.requested}" is a binary file (${bytes.length} bytes); only text files can be read`,
        );
      }
      return bytes.toString('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw fileError(err, target);
  }
}

/** Writes (or appends) text, creating missing parent folders inside the workspace. */
export async function writeTextFile(target: WorkspacePath, content: string, append: boolean): Promise<void> {
  try {
    await mkdir(path.dirname(target.real), { recursive: true });
    const flags =
      constants.O_WRONLY |
      constants.O_CREAT |
      constants.O_NOFOLLOW |
      (append ? constants.O_APPEND : constants.O_TRUNC);
    const handle = await open(target.real, flags, 0o666);
    try {
      await handle.writeFile(content, 'utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    throw fileError(err, target);
  }
}

export function countLines(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}
