"""``python -m memtape``: the command line, as the ``memtape`` script runs it."""

import sys

from memtape.cli import main

sys.exit(main())
