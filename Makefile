# Thin wrappers over the real commands (see README.md). Needs Python >= 3.11 and make.
PYTHON ?= python3
VENV   ?= .venv
# An activated conda environment other than base (CONDA_PREFIX set, CONDA_DEFAULT_ENV not "base",
# e.g. `conda activate dask-gpu-course` from environment.yml) is used as it is: its Python, with
# only the course package and its kernel installed into it. Otherwise the pinned CPU .venv.
CONDA_ENV := $(if $(filter-out base,$(or $(CONDA_DEFAULT_ENV),active)),$(CONDA_PREFIX),)
ifneq ($(strip $(CONDA_ENV)),)
BIN    := $(CONDA_ENV)/bin
STAMP  := $(CONDA_ENV)/.dask-course-installed
$(info make: using the active conda environment $(CONDA_ENV) (deactivate it to use $(VENV)))
else
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
endif
export COURSE_SCALE ?= small
# JupyterLab refuses to start as root (common in containers) unless told it may.
LAB_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root,)
# The URL JupyterLab prints (and opens, where a browser exists) lands on this notebook: the learner's
# copy in workspace/ (git-ignored, seeded from notebooks/ by tools.workspace), so answers never change
# the course's files.
FIRST_NOTEBOOK := workspace/00_environment_check.ipynb
# Each install step prints one line with its time (tools/install_step.sh). setuptools' warning about an
# editable install of a package in the working directory is about exactly the layout the course wants
# (`utils/` is the package), so it is filtered out by its message.
STEP := PYTHONWARNINGS="ignore:Editable installation" tools/install_step.sh

.PHONY: lab workspace test test-quick test-gpu-sim test-external doctor data venv lint format-notebooks course-index constraints benchmark benchmark-full gpu-check gpu-resolve clean-data progress site site-serve test-site

lab: $(STAMP) data  ## set up, generate the default data, copy the notebooks into workspace/ (yours to edit), start JupyterLab there
	$(BIN)/python -m tools.lab_setup
	DASK_CONFIG="$(CURDIR)/binder/dask" $(BIN)/jupyter lab $(LAB_ROOT) --notebook-dir=. --LabApp.default_url=/lab/tree/$(FIRST_NOTEBOOK)

workspace: $(STAMP)  ## after a git pull: bring new course versions into workspace/, keeping your answers (make lab does it too)
	$(BIN)/python -m tools.workspace

test: $(STAMP)  ## the whole test suite, its passes side by side (python -m tools.test_suite): unit, repository and site tests; the browser tests; the GPU wing's tests; every notebook once on the CPU under nbval with every exercise graded; once against an external cluster; once each in GPU mode on 1 and 2 simulated GPUs and on one shared by 2 workers
	$(BIN)/python -m tools.test_suite

test-quick: $(STAMP)  ## for development: unit tests and every notebook once on the CPU with its exercises graded, one pass (no external or GPU-mode pass)
	COURSE_SCALE=tiny $(BIN)/python -m pytest --course-exercises

test-gpu-sim: $(STAMP)  ## every notebook in GPU mode on the simulated RAPIDS stack: 1 then 2 simulated GPUs, then 2 workers sharing 1 (gpu_sim)
	COURSE_SCALE=tiny $(BIN)/python gpu_sim/notebook_pass.py --gpus 1
	COURSE_SCALE=tiny $(BIN)/python gpu_sim/notebook_pass.py --gpus 2
	COURSE_SCALE=tiny $(BIN)/python gpu_sim/notebook_pass.py --shared-gpu

test-external: $(STAMP)  ## every notebook under nbval against separate `dask scheduler` + 2 `dask worker` processes (DASK_SCHEDULER_ADDRESS)
	COURSE_SCALE=tiny $(BIN)/python -m tools.external_pass

venv: $(STAMP)

ifneq ($(strip $(CONDA_ENV)),)
$(STAMP): pyproject.toml  # the conda environment brings the libraries; add the course package and kernel
	$(BIN)/python -c 'import sys; sys.exit("error: Python >= 3.11 needed, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	@$(STEP) "installing the course package (utils)" $(BIN)/python -m pip install --quiet --no-deps -e .
	@$(STEP) "installing the course kernel" $(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (course)"
	touch $(STAMP)
else
$(STAMP): requirements.txt constraints.txt pyproject.toml
	$(PYTHON) -c 'import sys; sys.exit("error: Python >= 3.11 needed, found " + sys.version.split()[0]) if sys.version_info < (3, 11) else None'
	@$(STEP) "creating $(VENV)" $(PYTHON) -m venv $(VENV)
	@$(STEP) "upgrading pip" $(BIN)/python -m pip install --quiet --upgrade pip
	@$(STEP) "installing the pinned libraries (requirements.txt: the longest step)" $(BIN)/python -m pip install --quiet -r requirements.txt -c constraints.txt
	@$(STEP) "installing the course package (utils)" $(BIN)/python -m pip install --quiet --no-deps -e .
	@$(STEP) "installing the course kernel" $(BIN)/python -m ipykernel install --sys-prefix --name python3 --display-name "Python 3 (course)"
	touch $(STAMP)
endif

doctor: $(STAMP)  ## readiness check, one OK/WARN/FAIL line each: versions, hardware, disk and memory for $$COURSE_SCALE, a cluster, its dashboard
	$(BIN)/python -m utils.doctor

progress: $(STAMP)  ## your exercises per notebook: right, wrong, not attempted, what to revisit (python -m utils.progress)
	$(BIN)/python -m utils.progress

data: $(STAMP)  ## generate the dataset for $$COURSE_SCALE (default: small, 10 M rows)
	$(BIN)/python -m utils.datagen --scale $(COURSE_SCALE)

lint: $(STAMP)
	$(BIN)/ruff check utils tools tests benchmarks notebooks gpu_sim

format-notebooks: $(STAMP)  ## strip unchecked outputs and check the template
	$(BIN)/python -m tools.notebook_format --fix notebooks/*.ipynb

course-index: $(STAMP)  ## rewrite the notebook map, schedules, exam map table and What's next links from notebooks/index.yml
	$(BIN)/python -m tools.course_index --write

BENCH_STAMP := $(VENV)/.bench-installed

benchmark: $(BENCH_STAMP)  ## quick benchmark for development (1 M rows, each engine in its own process, about 6 minutes): reports/benchmarks/
	$(BIN)/python -m benchmarks.run --quick

benchmark-full: $(BENCH_STAMP)  ## the full benchmark on a quiet machine: 1 M, 10 M, 100 M rows, each engine in its own process (over two hours on 2 cores, 7 GB in $$COURSE_DATA_DIR; python -m benchmarks.run --help for shorter runs); writes docs/benchmarks.md
	$(BIN)/python -m benchmarks.run

$(BENCH_STAMP): $(STAMP) requirements-bench.txt
	$(BIN)/python -m pip install --quiet -r requirements-bench.txt -c constraints.txt
	touch $(BENCH_STAMP)

SITE_STAMP := $(dir $(STAMP)).site-installed

site: $(SITE_STAMP)  ## the course site in build/site/html: the notebooks as make test's CPU pass executed them (tiny scale, CPU backend; executed here where no fresh copy exists), README and docs/ as pages; any warning or broken link fails it
	$(BIN)/python -m tools.site build

site-serve: $(STAMP)  ## show the built site on http://127.0.0.1:8000/ (this machine only; make site first)
	$(BIN)/python -m tools.site serve

test-site: $(SITE_STAMP)  ## the built site's tests: links and anchors, the landing page and notebook pages in headless Chromium (make site first)
	COURSE_SITE_TESTS=1 $(BIN)/python -m pytest tests/site

$(SITE_STAMP): $(STAMP) requirements-site.txt
	@$(STEP) "installing the site's tools (requirements-site.txt)" $(BIN)/python -m pip install --quiet -r requirements-site.txt -c constraints.txt
	touch $(SITE_STAMP)

gpu-check: $(STAMP)  ## run the GPU tests (tests/gpu) and write reports/gpu-check.{md,json}
	$(BIN)/python -m tools.gpu.check

gpu-resolve: $(STAMP)  ## resolve the pip GPU environments (CUDA 12 and 13) against the package index, wheel metadata only (CI runs it)
	$(BIN)/python -m tools.gpu.resolve cu12 cu13

constraints:
	@test -z "$(strip $(CONDA_ENV))" || { echo "error: constraints.txt pins the CPU .venv; run make constraints outside the conda environment (conda deactivate)" >&2; exit 2; }
	$(BIN)/python -m pip freeze --exclude-editable | sed '1i # Full pin set of the CPU environment (pip freeze of requirements.txt on Python 3.11, Linux x86_64).\n# Regenerate with: make constraints' > constraints.txt

clean-data:  ## delete the course's datasets, generator temporaries and notebook scratch copies in $$COURSE_DATA_DIR (default data/), each listed first; keeps your exercise progress and every file the course did not make
	$(PYTHON) -m utils.datagen.clean
