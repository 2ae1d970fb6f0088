#!/usr/bin/python3
"""torchrun for Debian's python3-torch 1.13 on Python 3.11 (bookworm).

torch 1.13's Std.from_str (torch/distributed/elastic/multiprocessing/api.py)
finds a value's member by iterating the Std IntFlag; Python 3.11 iterates
only a flag's single-bit members, so NONE (0) and ALL (3) are never found,
torchrun's defaults `--redirects 0` and `--tee 0` become None and the agent
fails as it starts its workers ("'NoneType' object has no attribute
'get'"). This replaces that one function with a lookup by value and runs
torchrun (torch.distributed.run) with the same arguments.
"""
import re
import sys

from torch.distributed import run
from torch.distributed.elastic.multiprocessing import api


def _from_str(vm):
    if re.fullmatch(r"[0-3]", vm):
        return api.Std(int(vm))
    if re.fullmatch(r"([0-9]+:[0-3],)*[0-9]+:[0-3]", vm):
        return {int(i): api.Std(int(v)) for i, v in (m.split(":") for m in vm.split(","))}
    raise ValueError("%s does not match: <0|1|2|3> or <local_rank:<0|1|2|3>,...>" % vm)


api.Std.from_str = staticmethod(_from_str)

if __name__ == "__main__":
    sys.exit(run.main())
