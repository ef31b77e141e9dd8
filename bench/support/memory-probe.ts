/**
 * Preloaded (`NODE_OPTIONS=--require …/memory-probe.js`) into a process `bench/memory.ts` measures, and so into
 * each of its worker threads (the SDK runs workflows in one): every thread writes its V8 heap figures, and
 * their peaks, to MEMORY_PROBE_DIR twice a second; the main thread adds process.memoryUsage() and the
 * kernel's peak RSS. On SIGUSR2, and when the process exits, the main thread also lists the modules it has
 * loaded (require.cache) with their file sizes. Without MEMORY_PROBE_DIR it does nothing.
 */
import { readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapStatistics } from 'node:v8';
import { isMainThread, threadId } from 'node:worker_threads';

export interface ThreadMemory {
  thread_id: number;
  heap_used: number;
  heap_total: number;
  heap_physical: number;
  external: number;
  native_contexts: number;
  detached_contexts: number;
  peak_heap_used: number;
  peak_heap_physical: number;
}

export interface ProcessMemory extends ThreadMemory {
  rss: number;
  /** VmHWM: the kernel's peak RSS of the process. */
  rss_peak: number;
  array_buffers: number;
  /** process.memoryUsage().external: off-heap memory V8 knows of (buffers, the bundle's source…). */
  process_external: number;
  peak_rss_sampled: number;
}

export interface LoadedModule {
  path: string;
  bytes: number;
}

const dir = process.env.MEMORY_PROBE_DIR;

function kernelRss(): { rss: number; peak: number } {
  const status = readFileSync('/proc/self/status', 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) * 1024;
  return { rss: kib('VmRSS'), peak: kib('VmHWM') };
}

/** Written whole or not at all: the benchmark reads these files while the probe rewrites them. */
function writeWhole(file: string, value: unknown): void {
  writeFileSync(`${file}.tmp`, JSON.stringify(value));
  renameSync(`${file}.tmp`, file);
}

if (dir) {
  const peaks = { heapUsed: 0, heapPhysical: 0, rss: 0 };
  const thread = (): ThreadMemory => {
    const heap = getHeapStatistics();
    peaks.heapUsed = Math.max(peaks.heapUsed, heap.used_heap_size);
    peaks.heapPhysical = Math.max(peaks.heapPhysical, heap.total_physical_size);
    return {
      thread_id: threadId,
      heap_used: heap.used_heap_size,
      heap_total: heap.total_heap_size,
      heap_physical: heap.total_physical_size,
      external: heap.external_memory,
      native_contexts: heap.number_of_native_contexts,
      detached_contexts: heap.number_of_detached_contexts,
      peak_heap_used: peaks.heapUsed,
      peak_heap_physical: peaks.heapPhysical,
    };
  };
  const sample = (): ThreadMemory | ProcessMemory => {
    if (!isMainThread) return thread();
    const usage = process.memoryUsage();
    const kernel = kernelRss();
    peaks.rss = Math.max(peaks.rss, kernel.rss);
    return {
      ...thread(),
      rss: kernel.rss,
      rss_peak: kernel.peak,
      array_buffers: usage.arrayBuffers,
      process_external: usage.external,
      peak_rss_sampled: peaks.rss,
    };
  };
  const name = isMainThread ? 'main' : `thread-${threadId}`;
  const write = () => writeWhole(join(dir, `${process.pid}-${name}.json`), sample());
  setInterval(write, 500).unref();
  write();
  if (isMainThread) {
    let listings = 0;
    const listModules = (label: string) => {
      const modules: LoadedModule[] = Object.keys(require.cache).map((path) => {
        try {
          return { path, bytes: statSync(path).size };
        } catch {
          return { path, bytes: 0 };
        }
      });
      writeWhole(join(dir, `${process.pid}-modules-${label}.json`), modules);
    };
    process.on('SIGUSR2', () => listModules(String(++listings)));
    process.on('exit', () => {
      write();
      listModules('exit');
    });
  }
}
