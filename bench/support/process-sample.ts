/** What a benchmark reads of a process from /proc: its RSS, CPU time and bytes written. */
import { readFileSync } from 'node:fs';

export interface ProcessSample {
  rssBytes: number;
  cpuSeconds: number;
  writeBytes: number;
}

/** RSS, CPU time and bytes written of a process, from /proc (zeros when it is not readable). */
export function sampleProcess(pid: number | undefined): ProcessSample {
  if (pid === undefined) return { rssBytes: 0, cpuSeconds: 0, writeBytes: 0 };
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    // Fields after the command (which is in parentheses): utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    let writeBytes = 0;
    try {
      writeBytes = Number(/write_bytes:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? 0);
    } catch {
      // /proc/<pid>/io needs the same user or root; without it, writes are not measured.
    }
    return { rssBytes: rssKb * 1024, cpuSeconds: ticks / 100, writeBytes };
  } catch {
    return { rssBytes: 0, cpuSeconds: 0, writeBytes: 0 };
  }
}

/** Peak RSS of a set of processes (summed) while a level runs, sampled every 250 ms. */
export class PeakRss {
  private peak = 0;
  private readonly timer: NodeJS.Timeout;
  constructor(private readonly pids: () => (number | undefined)[]) {
    this.timer = setInterval(() => this.sample(), 250);
    this.sample();
  }
  private sample(): void {
    const total = this.pids().reduce<number>((sum, pid) => sum + sampleProcess(pid).rssBytes, 0);
    this.peak = Math.max(this.peak, total);
  }
  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return this.peak;
  }
}
