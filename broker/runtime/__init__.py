"""The process and its event loop: the clock the middle layer reads, slices of loop
time, loop lag and slow-step reports, the heap freezer, the open-files limit, the
invariants checked where they are relied on, and the faults a test may inject.
"""
