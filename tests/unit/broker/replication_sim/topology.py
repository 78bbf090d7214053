"""Who takes part in a run, by network address: three brokers, the active controller,
one producer and one consumer, plus the metadata quorum's voters and the one topic.

Why a module of its own: every part of the simulation addresses its messages with these
numbers, and the fault schedule and the checker walk the same broker set; one definition
keeps them agreeing.
"""

BROKERS = (1, 2, 3)
CONTROLLER = 0  # network address of "the active controller" (whichever voter leads)
PRODUCER = -1
CONSUMER = -2
VOTERS = [101, 102, 103]
TOPIC = "t"
CLUSTER_ID = "sim"  # the cluster id the brokers' requests carry (no token is checked)
