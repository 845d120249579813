"""A stand-in for a terminal that speaks the kitty graphics protocol, for the TUI's image test.

Runs a command on a real pty (120x40) and answers, as kitty does, the queries it writes:
the kitty graphics query (OK), primary device attributes, the cell size in pixels (10x20),
device status and the cursor position. Once `--ready` text is on screen it types `--prompt`
and Enter; once a kitty image transmission (a graphics command that is not a query) and its
placeholder cells are on screen (with the kitty answers) and `--done` text too, or `--timeout`
seconds pass, it sends Ctrl+C twice and
prints one JSON line: what it saw and how the command exited. Text is read from a pyte screen
(a VT100 model), so it is what a person would see, not bytes split by cursor moves.

Usage: graphics_terminal.py --ready TEXT --prompt TEXT --done TEXT [--answer-kitty yes|no]
       -- COMMAND...
"""

import argparse
import fcntl
import json
import os
import pty
import re
import select
import struct
import sys
import termios
import time

import pyte

PLACEHOLDER = "\U0010EEEE".encode()
QUERIES = [
    (re.compile(rb"\x1b_Gi=31,[^\x1b]*\x1b\\"), b"\x1b_Gi=31;OK\x1b\\"),
    (re.compile(rb"\x1b\[0?c"), b"\x1b[?62;22c"),
    (re.compile(rb"\x1b\[16t"), b"\x1b[6;20;10t"),
    (re.compile(rb"\x1b\[5n"), b"\x1b[0n"),
    (re.compile(rb"\x1b\[6n"), b"\x1b[1;1R"),
]
# A graphics command that transmits (not the `a=q` query).
TRANSMIT = re.compile(rb"\x1b_G(?![^;\x1b]*a=q)[^;\x1b]*;")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--ready", required=True)
    parser.add_argument("--prompt", required=True)
    parser.add_argument("--done", required=True)
    parser.add_argument("--answer-kitty", default="yes")
    parser.add_argument("--timeout", type=float, default=30.0)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    queries = [q for q in QUERIES if args.answer_kitty == "yes" or b"_G" not in q[1]]

    pid, fd = pty.fork()
    if pid == 0:
        os.environ["TERM"] = "xterm-kitty"
        os.environ.pop("TMUX", None)
        os.execvp(command[0], command)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))

    out = b""
    screen = pyte.Screen(120, 40)
    apc = ApcFilter()
    stream = pyte.ByteStream(screen)
    answered = [0] * len(queries)
    prompted = False
    saw_descriptor = False
    timed_out = False
    quit_at = None
    deadline = time.monotonic() + args.timeout
    while True:
        now = time.monotonic()
        drawn = TRANSMIT.search(out) and PLACEHOLDER in out
        text = "\n".join(screen.display)
        finished = args.done in text and (drawn or args.answer_kitty != "yes")
        if quit_at is None and (now > deadline or finished):
            timed_out = not finished
            os.write(fd, b"\x03")
            time.sleep(0.3)
            os.write(fd, b"\x03")
            quit_at = now
        if quit_at is not None and now - quit_at > 10:
            os.kill(pid, 9)
        ready, _, _ = select.select([fd], [], [], 0.05)
        if ready:
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                break
            out += chunk
            stream.feed(apc.strip(chunk))
            if "[image image/png," in "\n".join(screen.display):
                saw_descriptor = True
            # Answer each query once (the output so far is searched again on each read).
            for i, (pattern, reply) in enumerate(queries):
                found = len(pattern.findall(out))
                while answered[i] < found:
                    os.write(fd, reply)
                    answered[i] += 1
            if not prompted and args.ready in "\n".join(screen.display):
                time.sleep(0.2)
                os.write(fd, args.prompt.encode() + b"\r")
                prompted = True
    _, raw = os.waitpid(pid, 0)
    status = os.waitstatus_to_exitcode(raw)
    print(
        json.dumps(
            {
                "prompted": prompted,
                "transmitted": bool(TRANSMIT.search(out)),
                "placeholders": out.count(PLACEHOLDER),
                "descriptor": saw_descriptor,
                "exit": status,
                "timed_out": timed_out,
            }
        )
    )


class ApcFilter:
    """Drops application program commands (`ESC _ ... ESC \\`, kitty's graphics) from a byte
    stream, across chunk boundaries: pyte would print their payload as text."""

    def __init__(self):
        self.inside = False
        self.escape = False

    def strip(self, chunk):
        kept = bytearray()
        for byte in chunk:
            if self.inside:
                if self.escape and byte == 0x5C:
                    self.inside = False
                self.escape = byte == 0x1B
            elif self.escape:
                # An ESC held back from the previous byte (or chunk): is it an APC's start?
                self.escape = False
                if byte == 0x5F:
                    self.inside = True
                    continue
                kept.append(0x1B)
                if byte == 0x1B:
                    self.escape = True
                else:
                    kept.append(byte)
            elif byte == 0x1B:
                self.escape = True
            else:
                kept.append(byte)
        return bytes(kept)

if __name__ == "__main__":
    sys.exit(main())
