import { constants, type Dirent } from 'node:fs';
import { open, readdir, type FileHandle } from 'node:fs/promises';
import { fileError, errorCode, notRegularFile } from './file-errors';
import { ToolError } from './tool-context';
import { directoryPath, openInWorkspace, type WorkspacePath } from './workspace';

/** Larger files are refused rather than loaded whole into the worker's memory. */
export const MAX_FILE_BYTES = 16 * 1024 * 1024;
const BINARY_SNIFF_BYTES = 8000;
/** O_NONBLOCK: opening a FIFO must not wait for a writer; the type is checked once the file is open. */
const READ_FLAGS = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
/** A file deleted between the exclusive create failing and the plain open is tried again, this often. */
const CREATE_ATTEMPTS = 3;

/** Reads a UTF-8 text file; binary and oversized files are refused with a message saying so. */
export async function readTextFile(target: WorkspacePath): Promise<string> {
  let handle: FileHandle;
  try {
    handle = await openInWorkspace(target, (at) => open(at, READ_FLAGS));
  } catch (err) {
    throw fileError(err, target, 'reading');
  }
  try {
    const stats = await handle.stat();
    if (stats.isDirectory()) throw Object.assign(new Error('directory'), { code: 'EISDIR' });
    if (!stats.isFile()) throw notRegularFile(target);
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
  } catch (err) {
    throw fileError(err, target, 'reading');
  } finally {
    await handle.close();
  }
}

interface OpenedForWriting {
  handle: FileHandle;
  created: boolean;
}

/** Creates the file, or opens the one there: knowing which without a separate, racy look. */
async function openForWriting(at: string, append: boolean): Promise<OpenedForWriting> {
  const flags =
    constants.O_WRONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | (append ? constants.O_APPEND : 0);
  for (let attempt = 1; ; attempt += 1) {
    try {
      return { handle: await open(at, flags | constants.O_CREAT | constants.O_EXCL, 0o666), created: true };
    } catch (err) {
      if (errorCode(err) !== 'EEXIST') throw err;
    }
    try {
      return { handle: await open(at, flags), created: false };
    } catch (err) {
      if (errorCode(err) !== 'ENOENT' || attempt === CREATE_ATTEMPTS) throw err;
    }
  }
}

/**
 * Writes (or appends) text, creating missing parent folders inside the workspace (a skill mount refuses:
 * openInWorkspace). Says whether the file was created.
 */
export async function writeTextFile(
  target: WorkspacePath,
  content: string,
  append: boolean,
): Promise<{ created: boolean }> {
  let opened: OpenedForWriting;
  try {
    opened = await openInWorkspace(target, (at) => openForWriting(at, append), true);
  } catch (err) {
    throw fileError(err, target, 'writing');
  }
  const { handle, created } = opened;
  let writeStarted = false;
  try {
    if (!(await handle.stat()).isFile()) throw notRegularFile(target);
    writeStarted = true;
    // Truncated only now, once the file is known to be a regular one (O_TRUNC would act at open).
    if (!append) await handle.truncate(0);
    await handle.writeFile(content, 'utf8');
    return { created };
  } catch (err) {
    throw fileError(err, target, 'writing', writeStarted);
  } finally {
    await handle.close();
  }
}

/** The entries of a workspace folder, as they are in the folder that was opened. */
export async function listFolder(target: WorkspacePath): Promise<Dirent[]> {
  let openedAt = '';
  let handle: FileHandle;
  try {
    handle = await openInWorkspace(target, async (at) => {
      const folder = await open(at, READ_FLAGS);
      openedAt = at;
      return folder;
    });
  } catch (err) {
    throw fileError(err, target, 'listing');
  }
  try {
    const stats = await handle.stat();
    if (stats.isFile()) {
      throw new ToolError(`"${target.requested}" is a file, not a directory; read it with read_file`);
    }
    if (!stats.isDirectory()) throw notRegularFile(target);
    return await readdir(directoryPath(handle, openedAt), { withFileTypes: true });
  } catch (err) {
    throw fileError(err, target, 'listing');
  } finally {
    await handle.close();
  }
}

export function countLines(text: string): number {
  if (text === '') return 0;
  const newlines = text.split('\n').length - 1;
  return text.endsWith('\n') ? newlines : newlines + 1;
}
