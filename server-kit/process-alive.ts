/** Whether a process exists: signal 0 reaches it, or it exists but belongs to another user (EPERM). */

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
