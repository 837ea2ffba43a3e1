# SPDX-License-Identifier: GPL-2.0-or-later
"""torchrun, as Debian 12's /usr/bin/torchrun, with one fix.

Why a shim: Debian 12 ships PyTorch 1.13 with Python 3.11, and its torchrun
dies before starting any worker (AttributeError: 'NoneType' object has no
attribute 'get' in Std.to_map). Std.from_str("0") iterates the enum.IntFlag
Std looking for the member equal to 0, and Python 3.11 no longer yields a
Flag's zero-valued member (NONE) when iterating, so it returns None. The
shim replaces from_str with a version that builds members by value, then
runs torch.distributed.run.main() exactly as the torchrun entry point does.
Nothing else changes: all flags still come from the command line or PET_*.
"""
import re
import sys

from torch.distributed.elastic.multiprocessing import api


def _from_str(cls, vm):
    if re.match(api._VALUE_REGEX, vm):
        return cls(int(vm))
    if re.match(api._MAPPING_REGEX, vm):
        return {int(i): cls(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
    raise ValueError(f"{vm} does not match: <{api._VALUE_REGEX}> or <{api._MAPPING_REGEX}>")


api.Std.from_str = classmethod(_from_str)

from torch.distributed.run import main  # noqa: E402

if __name__ == "__main__":
    sys.argv[0] = "torchrun"
    sys.exit(main())
