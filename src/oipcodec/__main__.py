"""``python -m oipcodec`` runs the command line."""

import sys

from oipcodec.cli import main

sys.exit(main())
