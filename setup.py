"""setuptools build of the `qlinear` Python package: the extension comes from the project's own
CMake build (target qlinear_python), so there is one build system. CMAKE_ARGS adds -D options."""
import os
import pathlib
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


def version():
    """MAJOR.MINOR.PATCH from the public header's QLINEAR_VERSION_* macros (as CMakeLists.txt)."""
    text = (ROOT / "include" / "qlinear" / "qlinear.h").read_text()
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"^#define QLINEAR_VERSION_{part} ([0-9]+)$", text, re.MULTILINE)
        if m is None:
            sys.exit(f"include/qlinear/qlinear.h has no QLINEAR_VERSION_{part}")
        parts.append(m.group(1))
    return ".".join(parts)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = pathlib.Path(self.build_temp).resolve() / "cmake"
        args = ["-DCMAKE_BUILD_TYPE=Release", "-DQLINEAR_BUILD_PYTHON=ON", "-DQLINEAR_BUILD_TESTS=OFF",
                "-DQLINEAR_BUILD_TOOLS=OFF", "-DQLINEAR_BUILD_BENCH=OFF", f"-DPython3_EXECUTABLE={sys.executable}"]
        if "CMAKE_GENERATOR" not in os.environ and shutil.which("ninja") and not (build / "Makefile").exists():
            args += ["-G", "Ninja"]
        args += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build), *args], check=True)
        subprocess.run(["cmake", "--build", str(build), "--target", "qlinear_python",
                        "--parallel", str(os.cpu_count() or 1)], check=True)
        built = next((build / "python" / "qlinear").glob("_qlinear*.so"))
        dest = pathlib.Path(self.get_ext_fullpath(ext.name))
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, dest)


setup(
    version=version(),
    packages=["qlinear"],
    package_dir={"": "python"},
    package_data={"qlinear": ["__init__.pyi", "py.typed"]},
    ext_modules=[Extension("qlinear._qlinear", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    zip_safe=False,
)
