#!/usr/bin/python3
"""Runs ARGV... until a line or EOF arrives on stdin, then kills it. The test process holds our stdin,
so the helper dies with it even when a test crashes. Signals blocked or ignored by the test process
are inherited; reset them first."""
import signal
import subprocess
import sys

signal.pthread_sigmask(signal.SIG_SETMASK, [])
for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGINT, signal.SIGPIPE):
    signal.signal(number, signal.SIG_DFL)
child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, restore_signals=True)
sys.stdin.readline()
child.kill()
child.wait()
