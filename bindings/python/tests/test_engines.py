"""The binding is engine-neutral: the same calls on engines other than Redis (those that need
no server of their own here: one machine's files, and the in-process memory:// engine)."""

import subprocess
import sys
import tempfile
import textwrap

import pytest

import deadbolt


@pytest.fixture(params=["file", "memory"])
def url(request):
    if request.param == "memory":
        yield "memory://py-tests"
    else:
        with tempfile.TemporaryDirectory(prefix="deadbolt-py-file-") as d:
            yield f"file://{d}"


def test_a_lock_excludes_and_fences_on_other_engines(url):
    client = deadbolt.connect(url)
    with client.mutex("job") as lease:
        assert lease.fence > 0
        assert client.mutex("job").try_acquire() is None
        first = lease.fence
    with client.mutex("job") as lease:
        assert lease.fence > first


def test_two_processes_exclude_each_other_through_files():
    with tempfile.TemporaryDirectory(prefix="deadbolt-py-file-") as d:
        holder = deadbolt.connect(f"file://{d}").mutex("shared")
        holder.acquire()
        other = subprocess.run([sys.executable, "-c", textwrap.dedent(f"""
            import deadbolt
            m = deadbolt.connect("file://{d}").mutex("shared")
            print(m.try_acquire() is None)
            """)], capture_output=True, text=True, timeout=60)
        assert other.stdout.strip() == "True", other.stderr
        holder.release()


def test_url_forms_list_every_engine_of_the_build():
    forms = " ".join(deadbolt.url_forms())
    for scheme in ("redis://", "etcd://", "zk://", "postgresql://", "mysql://", "memcached://",
                   "file://", "memory://"):
        assert scheme in forms
