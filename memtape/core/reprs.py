"""One ``__repr__`` for the events', commands' and states' classes, writing what attrs does.

attrs compiles a ``__repr__`` for each class it makes, which is about a third
of what making a frozen class costs; ``memtape show`` makes every event,
command and state class before it reads a line. These classes name this one
instead (attrs leaves a class's own ``__repr__`` in place), and it writes
attrs' text: ``Name(field=value, ...)``, each shown field's value as its
``repr``. Their values cannot contain themselves, so attrs' guard against a
repr that recurses into its own object has nothing to catch here.
"""

from typing import Any

import attrs


def fields_repr(self: Any) -> str:
    """``Name(field=value, ...)`` over the fields attrs shows, as attrs' own repr writes it."""
    cls = type(self)
    shown = []
    for field in attrs.fields(cls):
        if field.repr is False:
            continue
        value = getattr(self, field.name, attrs.NOTHING)
        text = repr(value) if field.repr is True else field.repr(value)
        shown.append(f"{field.name}={text}")
    return f"{cls.__qualname__.rsplit('>.', 1)[-1]}({', '.join(shown)})"
