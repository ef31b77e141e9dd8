/**
 * The file system a just-bash command sees: the workspace, read and written on disk at its own path (so paths
 * agree with the file tools and with bubblewrap), a scratch /tmp in memory, and nothing else of the machine.
 * Everything outside the workspace and /tmp is read-only and empty, like bubblewrap's read-only root.
 */
import {
  InMemoryFs,
  MountableFs,
  OverlayFs,
  ReadWriteFs,
  type BufferEncoding,
  type CpOptions,
  type FileContent,
  type IFileSystem,
  type MkdirOptions,
  type RmOptions,
} from 'just-bash';
import { posix } from 'node:path';
import type { SkillMount } from '../../contracts/tools';
import { SKILLS_READ_ONLY } from './skill-mounts';

type WriteOptions = Parameters<IFileSystem['writeFile']>[2];

/** Bytes `content` takes once written with the encoding just-bash passes (redirects write latin1 "binary"). */
function byteLength(content: FileContent, options: WriteOptions): number {
  if (typeof content !== 'string') return content.byteLength;
  const encoding: BufferEncoding | undefined = typeof options === 'string' ? options : options?.encoding;
  return Buffer.byteLength(content, encoding ?? 'utf8');
}

function tooLarge(path: string, maxFileBytes: number): Error {
  return Object.assign(
    new Error(`EFBIG: file too large, write '${path}' (the limit is ${maxFileBytes / 2 ** 20} MiB)`),
    { code: 'EFBIG' },
  );
}

async function sizeOf(fs: IFileSystem, path: string): Promise<number> {
  try {
    return (await fs.stat(path)).size;
  } catch {
    return 0;
  }
}

/** The workspace on disk. just-bash checks every path against the root; this adds the file-size limit. */
class WorkspaceFs extends ReadWriteFs {
  /** `root` is also where it is mounted: paths it receives are relative to it, errors name the full path. */
  constructor(
    private readonly mountPoint: string,
    private readonly maxFileBytes: number,
  ) {
    // Links are followed and made only where they stay inside the root; cp copies no file above the limit.
    super({
      root: mountPoint,
      allowSymlinks: true,
      maxFileReadSize: maxFileBytes,
      maxCopySize: maxFileBytes,
    });
  }

  override async writeFile(path: string, content: FileContent, options?: WriteOptions): Promise<void> {
    if (byteLength(content, options) > this.maxFileBytes) throw this.tooLarge(path);
    return super.writeFile(path, content, options);
  }

  override async appendFile(path: string, content: FileContent, options?: WriteOptions): Promise<void> {
    const size = (await sizeOf(this, path)) + byteLength(content, options);
    if (size > this.maxFileBytes) throw this.tooLarge(path);
    return super.appendFile(path, content, options);
  }

  private tooLarge(path: string): Error {
    return tooLarge(posix.join(this.mountPoint, path), this.maxFileBytes);
  }
}

const SCRATCH_DIR = '/tmp';
const DEV_NULL = '/dev/null';

function isScratch(path: string): boolean {
  return path === SCRATCH_DIR || path.startsWith(`${SCRATCH_DIR}/`) || path === DEV_NULL;
}

/** The rest of the tree, in memory: read-only but for /tmp (and /dev/null, which redirects write to). */
class ScratchFs extends InMemoryFs {
  constructor(private readonly maxFileBytes: number) {
    super();
    this.mkdirSync(SCRATCH_DIR, { recursive: true });
    this.writeFileSync(DEV_NULL, '');
  }

  private writable(op: string, ...paths: string[]): void {
    const refused = paths.find((path) => !isScratch(path));
    if (refused !== undefined) {
      throw Object.assign(new Error(`EROFS: read-only file system, ${op} '${refused}'`), { code: 'EROFS' });
    }
  }

  override async writeFile(path: string, content: FileContent, options?: WriteOptions): Promise<void> {
    this.writable('open', path);
    if (path === DEV_NULL) return;
    if (byteLength(content, options) > this.maxFileBytes) throw tooLarge(path, this.maxFileBytes);
    return super.writeFile(path, content, options);
  }

  override async appendFile(path: string, content: FileContent, options?: WriteOptions): Promise<void> {
    this.writable('open', path);
    if (path === DEV_NULL) return;
    const size = (await sizeOf(this, path)) + byteLength(content, options);
    if (size > this.maxFileBytes) throw tooLarge(path, this.maxFileBytes);
    return super.appendFile(path, content, options);
  }

  override async mkdir(path: string, options?: MkdirOptions): Promise<void> {
    this.writable('mkdir', path);
    return super.mkdir(path, options);
  }

  override async rm(path: string, options?: RmOptions): Promise<void> {
    this.writable('rm', path);
    return super.rm(path, options);
  }

  override async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    this.writable('cp', dest);
    return super.cp(src, dest, options);
  }

  override async mv(src: string, dest: string): Promise<void> {
    this.writable('mv', src, dest);
    return super.mv(src, dest);
  }

  override async chmod(path: string, mode: number): Promise<void> {
    this.writable('chmod', path);
    return super.chmod(path, mode);
  }

  override async symlink(target: string, linkPath: string): Promise<void> {
    this.writable('symlink', linkPath);
    return super.symlink(target, linkPath);
  }

  override async link(existingPath: string, newPath: string): Promise<void> {
    this.writable('link', newPath);
    return super.link(existingPath, newPath);
  }

  override async utimes(path: string, atime: Date, mtime: Date): Promise<void> {
    this.writable('utimes', path);
    return super.utimes(path, atime, mtime);
  }
}

/**
 * A skill folder, read from disk within its root (OverlayFs: a link out of it is not followed). Every write
 * fails with EROFS, saying which path and why, as the file tools do.
 */
class SkillFs extends OverlayFs {
  constructor(
    private readonly containerPath: string,
    root: string,
    maxFileBytes: number,
  ) {
    super({ root, mountPoint: '/', readOnly: true, allowSymlinks: true, maxFileReadSize: maxFileBytes });
  }

  private refuse(op: string, path: string): never {
    const where = posix.join(this.containerPath, path);
    throw Object.assign(
      new Error(`EROFS: read-only file system, ${op} '${where}' (${this.containerPath} ${SKILLS_READ_ONLY})`),
      { code: 'EROFS' },
    );
  }

  override writeFile(path: string): Promise<void> {
    return this.refuse('write', path);
  }

  override appendFile(path: string): Promise<void> {
    return this.refuse('write', path);
  }

  override mkdir(path: string): Promise<void> {
    return this.refuse('mkdir', path);
  }

  override rm(path: string): Promise<void> {
    return this.refuse('rm', path);
  }

  override cp(_src: string, dest: string): Promise<void> {
    return this.refuse('cp', dest);
  }

  override mv(src: string): Promise<void> {
    return this.refuse('mv', src);
  }

  override chmod(path: string): Promise<void> {
    return this.refuse('chmod', path);
  }

  override symlink(_target: string, linkPath: string): Promise<void> {
    return this.refuse('symlink', linkPath);
  }

  override link(_existingPath: string, newPath: string): Promise<void> {
    return this.refuse('link', newPath);
  }

  override utimes(path: string): Promise<void> {
    return this.refuse('utimes', path);
  }
}

/**
 * The whole tree for one command. `workspaceReal` must have every link resolved: it is mounted at that path.
 * A workspace under /tmp is still on disk: the mount wins over the scratch folder around it. Each skill folder
 * (`host_path` with its links resolved) is mounted read-only at its container path: reads come from disk,
 * within the folder (a link out of it is not followed), and every write fails with EROFS.
 */
export function justBashFileSystem(
  workspaceReal: string,
  maxFileBytes: number,
  mounts: readonly SkillMount[] = [],
): IFileSystem {
  const fs = new MountableFs({ base: new ScratchFs(maxFileBytes) });
  fs.mount(workspaceReal, new WorkspaceFs(workspaceReal, maxFileBytes));
  for (const mount of mounts) {
    fs.mount(mount.container_path, new SkillFs(mount.container_path, mount.host_path, maxFileBytes));
  }
  return fs;
}
