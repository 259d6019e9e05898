// Started by own-postgres.ts, detached: `node own-postgres-watchdog.js PARENT SERVER BASE RECORD`.
// While the process that started the server (PARENT) lives, waits; once it is gone —
// ended, interrupted or killed — stops the server (SIGQUIT: an immediate shutdown; then
// SIGKILL if it lingers) and removes its directory and its record. Ends too when the
// server ends first.
const { rmSync } = require('node:fs');
const { clearInterval, setInterval } = require('node:timers');

const [parent, server] = process.argv.slice(2, 4).map(Number);
const [base, record] = process.argv.slice(4, 6);

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

function cleanUp() {
  rmSync(base, { recursive: true, force: true });
  rmSync(record, { force: true });
  process.exit(0);
}

const watch = setInterval(() => {
  if (alive(parent) && alive(server)) {
    return;
  }
  clearInterval(watch);
  if (!alive(server)) {
    return cleanUp();
  }
  process.kill(server, 'SIGQUIT');
  const deadline = Date.now() + 10_000;
  const wait = setInterval(() => {
    if (alive(server) && Date.now() < deadline) {
      return;
    }
    clearInterval(wait);
    if (alive(server)) {
      process.kill(server, 'SIGKILL');
    }
    cleanUp();
  }, 50);
}, 200);
