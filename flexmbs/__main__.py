"""`python -m flexmbs` is the `flexmbs` command."""

import sys

from .cli import main

sys.exit(main())
