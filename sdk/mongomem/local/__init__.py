"""The no-Docker local stack: embedded MongoDB-compatible server, HTTP front, scheduler, queue."""
