"""Run SecantusDB as the local stack's child: it stops itself when its parent dies.

`python -m mongomem.local.secantus_child <parent pid> <secantus arguments...>`. A parent killed with
SIGKILL cannot stop its child, and a server left running keeps the data dir's WiredTiger lock, so the next
`mongomem dev` could not start. The watchdog notices the parent is gone (this process was re-parented)
within half a second and shuts the server down the way SIGTERM does (a clean WiredTiger close).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time

POLL_SECONDS = 0.5


def _watch(parent: int) -> None:
    while True:
        time.sleep(POLL_SECONDS)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGTERM)
            return


def main(argv: list[str]) -> int:
    parent = int(argv[0])
    if os.getppid() != parent:  # the parent died before we got here
        return 0
    threading.Thread(target=_watch, args=(parent,), name="parent-watchdog", daemon=True).start()
    from secantus.cli import main as secantus_main

    return int(secantus_main(argv[1:]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
