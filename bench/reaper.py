"""Processes the bench scripts start and end."""


def kill_all(procs):
    """Ends processes whose work is measured already: killed, not waited for. Waiters left
    to finish would sit out the killed holder's TTL (half a minute on memcached) first."""
    for p in procs:
        p.kill()
    for p in procs:
        p.wait()
