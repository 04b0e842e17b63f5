"""Make the slow reference implementations (tests/reference.py) importable as
`reference` from every test module, whatever pytest's import mode; and run the tests
marked slow first, so that the suite's workers (pytest-xdist, which hands them out in
the collected order and lets an idle worker take the end of a busy one's share) do not
end on one of them while the other waits."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def pytest_collection_modifyitems(items):
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)
