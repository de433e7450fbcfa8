# The two entry points of the README (run, test).  Both create .venv on first use.
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python

.PHONY: run test test-all bench clean

# setup.py compiles the model's hot modules and the analytic solver's with mypyc (simnuma.model.native): a change
# to one compiles them again
$(VENV)/.installed: pyproject.toml setup.py $(wildcard simnuma/model/*.py simnuma/analytic/*.py)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,plot]'
	@$(VENV)/bin/simnuma --version
	touch $@

run: $(VENV)/.installed
	$(VENV)/bin/simnuma reproduce -o results --cache .simnuma-cache

test: $(VENV)/.installed
	$(VENV)/bin/ruff check simnuma tests benchmarks
	$(PY) -m mypy
	$(PY) -m pytest -n 2 -q -m "not slow"

test-all: $(VENV)/.installed
	$(PY) -m pytest -n 2 -q

bench: $(VENV)/.installed
	$(PY) benchmarks/run.py --calibration
	$(PY) benchmarks/reproduce.py
	$(PY) benchmarks/sweeps.py
	$(PY) benchmarks/formats.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .simnuma-cache
