"""``python -m ciyuan`` runs the command line."""

import sys

from ciyuan.cli import main

sys.exit(main())
