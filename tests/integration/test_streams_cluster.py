"""The stream differential test through a 3-node ringkv cluster: the same commands, sent
round-robin through the nodes, must answer like one redis-server (see test_streams.py for the
requests a cluster cannot answer like Redis and how they are checked instead).

    /usr/bin/python3 test_streams_cluster.py --server build/ringkv-server [--seed N]
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import main_support  # noqa: E402
import test_streams  # noqa: E402

if __name__ == "__main__":
    main_support.run_in_cluster(test_streams.main, "test_streams_cluster")
