"""Run SecantusDB as the local stack's child: it stops itself when its parent dies.

`python -m mongomem.local.secantus_child <parent pid> <secantus arguments...>`. A parent killed with
SIGKILL cannot stop its child, and a server left running keeps the data dir's WiredTiger lock, so the next
`mongomem dev` could not start. The watchdog notices the parent is gone (this process was re-parented)
within half a second and shuts the server down the way SIGTERM does (a clean WiredTiger close).

A checkpoint (MongoDB's `fsync` command, which the local stack sends after erasing a user) leaves no copy
of deleted documents in the journal or the oplog (see `scrubbing_checkpoint`) and marks the data dir for
a rebuild of its table files when the server next stops (mongomem.local.rebuild).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

POLL_SECONDS = 0.5
# WiredTiger's journal files, as SecantusDB configures them (`log=(file_max=10MB)`).
JOURNAL_PREFIX = "WiredTigerLog."
JOURNAL_FILE_MAX = 10 * 1024 * 1024
ERASED_MARK = "erased-since-rebuild"  # mongomem.local.rebuild.ERASED_MARK (this module imports nothing of it)


def scrubbing_checkpoint(checkpoint: Callable[[Any], None]) -> Callable[[Any], None]:
    """SecantusDB's checkpoint, made to leave no copy of what was deleted before it (issue 33).

    A checkpoint writes the tables without the deleted documents, but two places keep them: the oplog
    (none is written: the local stack runs SecantusDB standalone, and rows an older data dir kept are
    pruned here) and WiredTiger's journal, whose current file holds every write since it was opened.
    WiredTiger removes a journal file once a checkpoint no longer needs it, never the current one; so
    the current file is ended (a journal message longer than a file makes WiredTiger open the next) and
    a second checkpoint lets WiredTiger remove it. Costs one journal file of writes (10 MB)."""

    def scrubbed(storage: Any) -> None:
        checkpoint(storage)
        home = getattr(storage, "home_path", None)
        if getattr(storage, "_in_memory", False) or not home:
            return
        # the table files' freed blocks keep what was deleted: the next clean stop rebuilds them
        (Path(home).parent / ERASED_MARK).touch()
        storage.prune_oplog()
        if any(Path(home).glob(JOURNAL_PREFIX + "*")):
            # longer than a journal file: it never fits the current one (files are pre-sized, so their
            # size says nothing of how full they are), and the file it starts holds nothing else
            with storage._lock:
                storage._session().log_printf("." * (JOURNAL_FILE_MAX + 4096))
        checkpoint(storage)

    return scrubbed


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
    from secantus.cli import main as secantus_main  # lazy: 183 ms
    from secantus.storage import Storage  # lazy: 154 ms

    Storage.checkpoint = scrubbing_checkpoint(Storage.checkpoint)

    return int(secantus_main(argv[1:]))


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
