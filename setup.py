"""The wheel's build hook: when FLEXMBS_SHIP_KERNELS names a folder of compiled kernels
(`python -m flexmbs.cli.precompile --ship FOLDER` makes one; `make wheel` does both), the
folder goes into the wheel as flexmbs/_kernels (flexmbs.runtime.kernel_cache)."""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildWithKernels(build_py):
    def run(self):
        super().run()
        folder = os.environ.get("FLEXMBS_SHIP_KERNELS")
        target = os.path.join(self.build_lib, "flexmbs", "_kernels")
        shutil.rmtree(target, ignore_errors=True)
        if folder:
            shutil.copytree(folder, target)


setup(cmdclass={"build_py": BuildWithKernels})
