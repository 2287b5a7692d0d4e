"""The differential test through a 3-node ringkv cluster: the same generated commands, sent
round-robin through the nodes, must answer like one redis-server (see test_differential.py for
the few requests a cluster cannot answer like Redis and how they are checked instead).

    /usr/bin/python3 test_differential_cluster.py --server build/ringkv-server [--seed N]

It sends 10000 commands (times RINGKV_TEST_SCALE, see harness.py) unless --count says otherwise.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import harness  # noqa: E402
import main_support  # noqa: E402
import test_differential  # noqa: E402

if __name__ == "__main__":
    main_support.run_in_cluster(test_differential.main, "test_differential_cluster",
                                count=harness.scaled(10000, minimum=1000))
