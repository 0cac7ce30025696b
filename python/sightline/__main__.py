"""`python -m sightline`: the command line (the core itself is `python -m sightline.host`)."""

import sys

from sightline.entry.cli import main

if __name__ == "__main__":
    sys.exit(main())
