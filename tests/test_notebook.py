"""The tutorial notebook (docs/tutorial-notebook.ipynb) executed as a reader would, in a
fresh kernel and folder (nbclient): every cell runs, the checks its cells assert hold
(the energy balance passes), and it prints no warning."""

from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")
nbformat = pytest.importorskip("nbformat")

NOTEBOOK = Path(__file__).resolve().parents[1] / "docs" / "tutorial-notebook.ipynb"


def test_the_tutorial_notebook_runs_and_its_checks_pass(tmp_path):
    nb = nbformat.read(NOTEBOOK, as_version=4)
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(tmp_path)}})
    client.execute()  # a cell that raises (a failed assert) raises CellExecutionError
    printed = {"stdout": "", "stderr": ""}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                printed[out["name"]] += out["text"]
    assert "passed: True" in printed["stdout"], printed
    assert "warning" not in printed["stderr"].lower(), printed["stderr"]
    assert (tmp_path / "arm.h5").exists()
