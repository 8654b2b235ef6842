"""Engines: ``z3`` (one formula per program, queries and incremental enumeration) and ``brute``
(streams candidate executions and filters them with the model, as herd7 does; the test oracle).
Both take the same event graph, model and observables and yield the same outcome sets."""
