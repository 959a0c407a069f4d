#!/usr/bin/python3
"""The lock users write on memcached (tooz's memcached driver, many hand-rolled ones) under the
bench driver's cycle and contend scenarios: add(name, token, expire) through python3-pymemcache,
sleep --poll-ms between tries, delete(name) to release (no owner check: it can delete another's
lock). --url is memcached://host:port; the contended counter lives on redis-server --port, as the
driver's. One JSON object on stdout."""
import os
import time
import urllib.parse

from pymemcache.client.base import Client

from peer import serve


class Lock:
    """One connection, one name: acquire() polls add, release() deletes."""

    def __init__(self, url, name, poll_s, ttl_s=30):
        u = urllib.parse.urlparse(url)
        self.mc = Client((u.hostname, u.port), no_delay=True)
        self.name, self.poll_s, self.ttl_s = name, poll_s, ttl_s
        self.token = os.urandom(16).hex().encode()

    def acquire(self, timeout=None):
        until = None if timeout is None else time.monotonic() + timeout
        while not self.mc.add(self.name, self.token, expire=self.ttl_s, noreply=False):
            if until is not None and time.monotonic() >= until:
                return False
            time.sleep(self.poll_s)
        return True

    def release(self):
        self.mc.delete(self.name, noreply=False)


if __name__ == "__main__":
    serve("mc_poll.py", Lock)
