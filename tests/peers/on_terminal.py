"""Runs a command as a person at a terminal would: its stdin and stderr on a real pty, its
stdout passed through untouched (so a test still reads the command's output on its own).

What the command writes to the terminal is copied to this script's stderr, with the
terminal's CR LF line ends turned back into LF. Exits with the command's exit code (128 + the
signal when a signal ended it). Nothing is typed: the terminal's input stays empty.

Usage: on_terminal.py COMMAND...
"""

import os
import pty
import subprocess
import sys


def main() -> int:
    if len(sys.argv) < 2:
        print("usage: on_terminal.py COMMAND...", file=sys.stderr)
        return 2
    master, slave = pty.openpty()
    child = subprocess.Popen(sys.argv[1:], stdin=slave, stderr=slave)
    os.close(slave)
    seen = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            # EIO: every holder of the terminal's other end (the command, and whatever it
            # started with that end) has closed it.
            break
        if not chunk:
            break
        seen.extend(chunk)
    os.close(master)
    sys.stderr.buffer.write(bytes(seen).replace(b"\r\n", b"\n"))
    sys.stderr.flush()
    code = child.wait()
    return 128 - code if code < 0 else code


if __name__ == "__main__":
    sys.exit(main())
