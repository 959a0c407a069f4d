"""pip install --no-build-isolation ./bindings/python

Packs deadbolt's Python package with its native module and the deadbolt libraries it loads.
The module comes from the project's build (DEADBOLT_BUILD_DIR, default: ../../build, as
scripts/setup.sh makes it); when that has no module for this interpreter, CMake builds one
into build-python/ first (a few minutes).
"""

import glob
import os
import re
import shutil
import subprocess
import sys
import sysconfig

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def module_name():
    return "_deadbolt" + sysconfig.get_config_var("EXT_SUFFIX")


def built_module():
    """The build directory whose bindings/python/deadbolt holds a module for this Python."""
    build = os.environ.get("DEADBOLT_BUILD_DIR", os.path.join(ROOT, "build"))
    if os.path.exists(os.path.join(build, "bindings/python/deadbolt", module_name())):
        return build
    build = os.path.join(ROOT, "build-python")
    print(f"deadbolt: building the native module with CMake into {build}", file=sys.stderr)
    subprocess.run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release",
                    "-DDEADBOLT_BUILD_TESTS=OFF", "-DDEADBOLT_BUILD_BENCH=OFF",
                    "-DDEADBOLT_BUILD_CLI=OFF", f"-DPython_EXECUTABLE={sys.executable}"],
                   check=True)
    subprocess.run(["cmake", "--build", build, "--target", "deadbolt_python", "-j",
                    str(os.cpu_count() or 2)], check=True)
    return build


class BuildWithNative(build_py):
    """Copies the native module and the libraries it links (found through its RUNPATH's
    build directories) into the package: the module looks beside itself first ($ORIGIN)."""

    def run(self):
        super().run()
        build = built_module()
        target = os.path.join(self.build_lib, "deadbolt")
        shutil.copy2(os.path.join(build, "bindings/python/deadbolt", module_name()), target)
        # Each library once, under the name the loader looks for (its soname: lib*.so.N).
        for pattern in ("libdeadbolt_*.so.*", "src/*/libdeadbolt_*.so.*",
                        "src/backends/*/libdeadbolt_*.so.*"):
            for lib in glob.glob(os.path.join(build, pattern)):
                if re.search(r"\.so\.\d+$", lib):
                    shutil.copy2(lib, target, follow_symlinks=True)
        # A developer's build keeps debug information (90 MB); the package does not need it.
        if shutil.which("strip"):
            subprocess.run(["strip", "--strip-debug",
                            *glob.glob(os.path.join(target, "*.so*"))], check=True)


class BinaryDistribution(Distribution):
    """A wheel for this platform and interpreter: it carries a native module."""

    def has_ext_modules(self):
        return True


setup(
    name="deadbolt",
    version="0.1.0",
    description="Distributed locks with fencing tokens on Redis, etcd, ZooKeeper, PostgreSQL, "
                "MariaDB and more",
    packages=["deadbolt"],
    package_data={"deadbolt": ["py.typed", "*.pyi"]},
    python_requires=">=3.9",
    cmdclass={"build_py": BuildWithNative},
    distclass=BinaryDistribution,
    zip_safe=False,
)
