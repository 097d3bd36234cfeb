"""What a run costs as a provider bills it: prices, prompt caches, the bill of each request.

A projection room: it reads the windows a run sent and the run's clock, and
decides nothing. Nothing about cost enters the events, so a new price table
(or another provider's cache rules) re-prices an old run. Its modules, each
with one job: ``prices`` (the price table), ``prompt`` (the request as sent,
kept step by step), ``caches`` (each provider's cache rules), ``tally`` (the
bill of a run, request by request), ``calibration`` (the bill against the
usage a transcript recorded).
"""
