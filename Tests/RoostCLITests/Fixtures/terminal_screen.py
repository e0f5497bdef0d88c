#!/usr/bin/python3
"""terminal_screen.py ROWS COLUMNS -- COMMAND...: runs COMMAND on a pseudo-terminal of that size (as a person at a
terminal would), collects everything it writes until it has been quiet for a second, then presses q (leaving a
pager) and waits for it to end. Prints one JSON object: the output (escape sequences as they came), whether the
command was still running when q was pressed, and its exit status."""

import fcntl
import json
import os
import pty
import select
import struct
import sys
import termios
import time


def read_until_quiet(fd, quiet, limit):
    """What the command writes until it has been quiet for `quiet` seconds (still running), or until the terminal
    closes (it ended). Returns the output and whether it ended."""
    output = b""
    deadline = time.time() + limit
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], quiet)
        if not ready:
            return output, False
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            return output, True
        if not chunk:
            return output, True
        output += chunk
    return output, False


def main():
    rows, columns = int(sys.argv[1]), int(sys.argv[2])
    command = sys.argv[sys.argv.index("--") + 1:]
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(command[0], command)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    output, ended = read_until_quiet(fd, 1.0, 30)
    running = not ended
    if running:
        os.write(fd, b"q")
        output += read_until_quiet(fd, 1.0, 10)[0]
    _, status = os.waitpid(pid, 0)
    print(json.dumps({"output": output.decode("utf-8", "replace"), "running_at_q": running,
                      "status": os.waitstatus_to_exitcode(status)}))


if __name__ == "__main__":
    main()
