# `make run` and `make test` each work alone on a fresh clone.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup run test coverage docs wheel clean browser

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	$(BIN)/flexmbs run data/models/huang_two_link.toml -o results/huang_two_link.h5
	$(BIN)/flexmbs energy results/huang_two_link.h5

# The kernels as plain Python (NUMBA_DISABLE_JIT=1) under coverage, on a fast subset.
COVERAGE_TESTS := tests/test_kinematics_dynamics.py tests/test_elements.py \
	tests/test_topology.py tests/test_timefunctions.py tests/test_model_input.py \
	tests/test_urdf.py::test_joint_types_limits_and_merged_links \
	tests/test_urdf.py::test_bad_urdfs_and_specs_are_one_line \
	tests/test_urdf_repair.py::test_repaired_inertias tests/test_urdf_repair.py::test_inertia_from_shapes_at_a_density \
	tests/test_sweep.py::test_parameters_and_cases tests/test_output_lock.py \
	tests/test_bordered_band.py::test_factor_and_solve_equal_numpy tests/test_solver_settings.py
COVERAGE_FLOOR := 40

# The viewer's tests drive the system's Chromium (Debian's package chromium; Playwright's
# own browser downloads are not used): installed here when it is missing and apt-get can.
browser:
	@command -v chromium >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
		&& (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends chromium) >/dev/null 2>&1 && echo "installed chromium"; } \
		|| echo "no chromium (apt-get install chromium): the viewer's browser tests are skipped"

# Every kernel compiled once, in two processes, before the test workers load them (the
# kernels the wheel carries, so `make wheel` and `make test` share them). The type
# check and the coverage run need no compiled kernel: they run beside precompile, whose
# second process spends much of its time waiting for the first, and print when done.
test: $(STAMP) browser
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports --no-cache
	@$(BIN)/mypy > $(VENV)/mypy.log 2>&1 & types=$$!; \
	$(MAKE) --no-print-directory coverage > $(VENV)/coverage.log 2>&1 & cover=$$!; \
	$(BIN)/flexmbs precompile; kernels=$$?; \
	wait $$types; typed=$$?; echo "$(BIN)/mypy"; cat $(VENV)/mypy.log; \
	wait $$cover; covered=$$?; cat $(VENV)/coverage.log; \
	[ $$kernels = 0 ] && [ $$typed = 0 ] && [ $$covered = 0 ]
	FLEXMBS_COMPILE_ELSEWHERE=0 $(BIN)/python -m pytest -q -n auto --dist worksteal --durations=15

# The kernels as plain Python under coverage (COVERAGE_TESTS), failing below the floor.
coverage: $(STAMP)
	NUMBA_DISABLE_JIT=1 $(BIN)/python -m coverage run --source=flexmbs -m pytest -q \
		-p no:cacheprovider $(COVERAGE_TESTS) -k "not test_reference_power_balance"
	@printf "coverage of flexmbs without numba (%%): "
	@$(BIN)/python -m coverage report --fail-under=$(COVERAGE_FLOOR) --format=total

# A wheel carrying its kernels, compiled for a generic processor (flexmbs.runtime.kernel_cache).
wheel: $(STAMP)
	rm -rf build dist/flexmbs-*.whl
	$(BIN)/python -m flexmbs.cli.precompile --ship build/kernels
	FLEXMBS_SHIP_KERNELS=build/kernels $(BIN)/python -m pip wheel --quiet --no-deps -w dist .
	@ls dist/flexmbs-*.whl

docs: $(STAMP)
	$(BIN)/python -m sphinx -b html -W --keep-going -q docs docs/_build/html
	@echo "docs/_build/html/index.html"

clean:
	rm -rf $(VENV) results .pytest_cache docs/_build .coverage build dist
