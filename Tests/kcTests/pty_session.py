#!/usr/bin/env python3
"""Drives a command in a pseudo-terminal, as a person at a keyboard would.

usage: pty_session.py SCRIPT.json
SCRIPT = {"argv": [...], "env": {...}, "steps": [["expect", "Password"], ["send", "pw\\n"], ...],
          "answers": [["Prompt text", "reply\\n"], ...], "timeout": 20}
"steps" run in order; then, until the program exits, every new occurrence of an
"answers" prompt on the screen is answered with its reply.
Prints JSON: {"status": exit code, "screen": everything the terminal showed, "echo_off": [bool per send]}
"echo_off" records whether the terminal had ECHO switched off at the moment each line was sent;
"echo_at_exit" whether ECHO was on once the program had exited (null if it cannot be read).
"""
import json, os, pty, select, sys, termios, time

def main():
    script = json.load(open(sys.argv[1]))
    pid, fd = pty.fork()
    if pid == 0:
        os.execve(script["argv"][0], script["argv"], script["env"])
    deadline = time.time() + script.get("timeout", 20)
    screen = b""
    echo_off = []

    def read_some(wait):
        nonlocal screen
        r, _, _ = select.select([fd], [], [], wait)
        if r:
            try:
                data = os.read(fd, 4096)
            except OSError:
                return False
            if not data:
                return False
            screen += data
        return True

    consumed = 0
    for kind, value in script["steps"]:
        if kind == "expect":
            needle = value.encode()
            while needle not in screen[consumed:]:
                if time.time() > deadline or not read_some(0.1):
                    if needle in screen[consumed:]:
                        break
                    print(json.dumps({"status": -1, "screen": screen.decode(errors="replace"), "echo_off": echo_off,
                                      "error": "timed out waiting for " + value}))
                    os.kill(pid, 9)
                    return
            consumed = screen.index(needle, consumed) + len(needle)
        elif kind == "send":
            time.sleep(0.05)
            attrs = termios.tcgetattr(fd)
            echo_off.append(not (attrs[3] & termios.ECHO))
            os.write(fd, value.encode())
    answers = [(p.encode(), r.encode()) for p, r in script.get("answers", [])]
    answered = consumed
    while time.time() < deadline:
        alive = read_some(0.1)
        # Answer the earliest prompt that appeared since the last answer.
        hits = [(screen.find(p, answered), p, r) for p, r in answers if screen.find(p, answered) >= 0]
        if hits:
            at, p, r = min(hits)
            answered = at + len(p)
            time.sleep(0.05)
            attrs = termios.tcgetattr(fd)
            echo_off.append(not (attrs[3] & termios.ECHO))
            os.write(fd, r)
            continue
        if not alive:
            break
    _, status = os.waitpid(pid, 0)
    try:
        echo_at_exit = bool(termios.tcgetattr(fd)[3] & termios.ECHO)
    except termios.error:
        echo_at_exit = None
    print(json.dumps({"status": os.waitstatus_to_exitcode(status), "screen": screen.decode(errors="replace"),
                      "echo_off": echo_off, "echo_at_exit": echo_at_exit}))

main()
