"""Starting rillet node processes on this machine: one throwaway node (``local_node``) or a
planned multi-node cluster (``local_cluster``).

A leaf package, standard library only: the CLI (``rillet cluster``, ``rillet demo``), the
pytest plugin, the benchmarks and the chaos harness all launch nodes through it, and it
imports none of them, so none of them has to import another to start a cluster.
"""
