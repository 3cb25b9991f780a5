import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

/**
 * CPU time and CPU affinity of the benches' processes (Linux: /proc and util-linux `taskset`). Throughput on a
 * 2-core machine shared by the load generator says little about a server once the load generator is the
 * bottleneck; the CPU a server spends per answered request does (bench/http-load.ts, bench/grpc.ts).
 */

/** Clock ticks per second of /proc/<pid>/stat's times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * The fields of /proc/<pid>/stat (or of a thread's, `task/<tid>/stat`) after the command name: [0] state, [2]
 * pgrp, [11..14] utime stime cutime cstime.
 */
function statFields(pid: number, tid?: string): string[] {
  const text = readFileSync(tid === undefined ? `/proc/${pid}/stat` : `/proc/${pid}/task/${tid}/stat`, 'utf8');
  // The command name is in parentheses and may itself hold ") ": the fields start after the last one.
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** CPU seconds (user + system, every thread) a process has used: this one, or another by pid (/proc). */
export function cpuSeconds(pid?: number): number {
  if (pid === undefined) {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  }
  const f = statFields(pid);
  return (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
}

/**
 * CPU seconds (user + system) of a process's main thread and of all its other threads together: a server's
 * requests run on its main thread, V8's background compiler and GC and the thread pool beside it.
 */
export function threadCpuSeconds(pid: number): { main: number; other: number } {
  const out = { main: 0, other: 0 };
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let f: string[];
    try {
      f = statFields(pid, tid);
    } catch {
      continue; // the thread ended meanwhile
    }
    const secs = (Number(f[11]) + Number(f[12])) / TICKS_PER_SECOND;
    if (tid === String(pid)) out.main += secs;
    else out.other += secs;
  }
  return out;
}

/** The live processes of process group `pgid`. */
function groupPids(pgid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync('/proc')) {
    const c = name.charCodeAt(0);
    if (c < 48 || c > 57) continue;
    try {
      if (Number(statFields(Number(name))[2]) === pgid) pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** User and system CPU seconds. */
export interface CpuTimes {
  user: number;
  system: number;
}

/**
 * CPU seconds of a process group, user and system apart: a server spawned detached leads its own group, so a
 * wrapper's children (hardhat's cli re-spawning node) count too, and children already reaped through their
 * parent's cutime/cstime.
 */
export function groupCpuTimes(pgid: number): CpuTimes {
  let user = 0;
  let system = 0;
  for (const pid of groupPids(pgid)) {
    try {
      const f = statFields(pid);
      user += Number(f[11]) + Number(f[13]);
      system += Number(f[12]) + Number(f[14]);
    } catch {
      // exited meanwhile
    }
  }
  return { user: user / TICKS_PER_SECOND, system: system / TICKS_PER_SECOND };
}

/** CPU seconds (user + system) of a process group (groupCpuTimes). */
export function groupCpuSeconds(pgid: number): number {
  const t = groupCpuTimes(pgid);
  return t.user + t.system;
}

/** Whether `taskset` (util-linux) can pin processes here. */
export function canPin(): boolean {
  try {
    execFileSync('taskset', ['-p', String(process.pid)], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/** Pins every thread of every process of group `pgid` to `cpus` (taskset list syntax, e.g. "0" or "0,1"). */
export function pinGroup(pgid: number, cpus: string): void {
  for (const pid of groupPids(pgid)) {
    execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
  }
}

/** Pins every thread of process `pid` (this one by default) to `cpus`. */
export function pinProcess(cpus: string, pid = process.pid): void {
  execFileSync('taskset', ['-a', '-p', '-c', cpus, String(pid)], { stdio: 'ignore' });
}
