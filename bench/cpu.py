#!/usr/bin/env python3
"""Runs a command and reports its own CPU and memory: user+sys seconds and peak RSS of the
command and its children, from wait4(), so the measuring adds nothing to the figures.

usage: bench/cpu.py OUT_FILE CMD [ARGS...]
Writes "user_s sys_s maxrss_kib exit_status" to OUT_FILE; the command's stdout/stderr pass
through unchanged."""
import os
import sys

out, cmd = sys.argv[1], sys.argv[2:]
pid = os.fork()
if pid == 0:
    try:
        os.execvp(cmd[0], cmd)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
with open(out, "w") as f:
    f.write("%.4f %.4f %d %d\n" % (ru.ru_utime, ru.ru_stime, ru.ru_maxrss,
                                   os.waitstatus_to_exitcode(status)))
