"""The differential transaction test through a 3-node ringkv cluster with atomic-multikey on:
the scenarios and generated templates of test_transactions.py with their transactions spanning
nodes, and the multi-key commands over keys on different nodes, compared with one redis-server
(see test_transactions.py).

    /usr/bin/python3 test_transactions_cluster_diff.py --server build/ringkv-server
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import main_support  # noqa: E402
import test_transactions  # noqa: E402

if __name__ == "__main__":
    main_support.run_in_cluster(test_transactions.main, "test_transactions_cluster_diff")
