"""Chaos harness (docs/chaos.md): seeded faults against a real local cluster.

``schedule`` draws the faults from a seed, ``nemesis`` applies them to a LocalCluster,
``workload``/``members``/``topic_churn`` write, consume and change metadata meanwhile and
record every operation in the ``history``; ``settle`` gathers the final state after healing,
``checker`` judges both, ``report`` summarises them, ``runner`` ties one run together.
"""
