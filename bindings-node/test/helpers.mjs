// Small helpers several suites share: a free loopback port, and whether child processes are
// still alive (the suites check that nothing outlives its owner).
import net from 'node:net';

/** A port free right now on loopback (the caller binds it next; nothing else races here). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** Whether a process with this pid exists (signal 0 only asks). */
export function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits up to 10 s for the processes to be gone; resolves with those still alive. */
export async function gone(pids) {
  for (let i = 0; i < 200 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 50));
  return pids.filter(alive);
}
