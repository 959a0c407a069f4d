#!/usr/bin/python3
"""The lock users write on a database they already have, under the bench driver's cycle and
contend scenarios: try the engine's lock without waiting (pg_try_advisory_lock through
python3-psycopg2, GET_LOCK(name, 0) through python3-pymysql) and sleep --poll-ms between
tries. --url names the server (postgresql:// or mysql://); the contended counter lives on
redis-server --port, as the driver's. One JSON object on stdout."""
import hashlib
import time
import urllib.parse


from peer import serve


def pg_key(name):
    return int.from_bytes(hashlib.sha256(b"deadbolt:" + name.encode()).digest()[:8], "big", signed=True)


class Lock:
    """One session, one name: acquire() polls the try-lock, release() unlocks."""

    def __init__(self, url, name, poll_s):
        self.poll_s = poll_s
        if url.startswith("postgresql://"):
            import psycopg2
            self.db = psycopg2.connect(url)
            self.db.autocommit = True
            self.try_sql, self.unlock_sql = "SELECT pg_try_advisory_lock(%s)", "SELECT pg_advisory_unlock(%s)"
            self.arg = pg_key(name)
        else:
            import pymysql
            u = urllib.parse.urlparse(url)
            self.db = pymysql.connect(host=u.hostname, port=u.port, user=u.username, password=u.password,
                                      database=u.path.lstrip("/"), autocommit=True)
            self.try_sql, self.unlock_sql = "SELECT GET_LOCK(%s, 0)", "SELECT RELEASE_LOCK(%s)"
            self.arg = name
        self.cur = self.db.cursor()

    def try_once(self):
        self.cur.execute(self.try_sql, (self.arg,))
        return self.cur.fetchone()[0] in (True, 1)

    def acquire(self, timeout=None):
        until = None if timeout is None else time.monotonic() + timeout
        while not self.try_once():
            if until is not None and time.monotonic() >= until:
                return False
            time.sleep(self.poll_s)
        return True

    def release(self):
        self.cur.execute(self.unlock_sql, (self.arg,))
        self.cur.fetchone()


if __name__ == "__main__":
    serve("sql_poll.py", Lock)
