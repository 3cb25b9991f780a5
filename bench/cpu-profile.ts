/** CPU profiles of a part of a bench (node:inspector in the same process), for benches that measure one phase. */
import { writeFileSync } from 'node:fs';

/** A CPU profile of `run` written to `file`, or just `run` without a file. */
export async function profiled<T>(file: string | undefined, run: () => Promise<T>): Promise<T> {
  if (!file) return run();
  const { Session } = await import('node:inspector/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await run();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(file, JSON.stringify(profile));
    session.disconnect();
  }
}
