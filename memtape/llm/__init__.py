"""A model in the loop: the ``[llm]`` settings, the answers in force, the client, the cache.

A policy that asks a model (``summarizer = "llm"``) puts a ``Question`` to
the answers in force (``memtape.llm.answers``): live by default, through the
official ``openai`` SDK (the ``llm`` extra; imported only when a model is
actually asked) and a content-addressed response cache; recorded when a run
is checked, so that a check re-decides against the answers the run holds.
Whatever the model answered is recorded in the event as a
``memtape.core.events.ModelCall``; replay, seek, show and diff never ask.
"""
