"""Make the slow reference implementations (tests/reference.py) importable as
`reference` from every test module, whatever pytest's import mode."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
