# semfs — the two front-door commands are `make run` and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip
PYTHON ?= python3
export OMP_NUM_THREADS ?= 1
export OPENBLAS_NUM_THREADS ?= 1
export OMP_THREAD_LIMIT ?= 1

.PHONY: setup run demo test unit lint typecheck bench bench-scifact bench-latency bench-ingest bench-ocr bench-burst deploy clean

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev]'
	touch $@

run: setup
	$(VENV)/bin/semfs demo --dir .semfs/demo
	@$(VENV)/bin/semfs status
	@echo
	@echo "semfs is running on its embedded defaults (data in .semfs/). Try:"
	@echo "  $(VENV)/bin/semfs search 'how long do we have to pay Acme invoices'"
	@echo "  $(VENV)/bin/semfs search 'e-bike sales in Germany' --thread 'Q3 Financials'"
	@echo "  $(VENV)/bin/semfs search 'password rules' --mode keyword --json"
	@echo "  $(VENV)/bin/semfs ingest ~/Documents --tag personal"
	@echo "  SEMFS_MAILBOXES='files@localhost=default' $(VENV)/bin/semfs serve   # mail to files@localhost, port 2525"
	@echo
	@echo "\$$ semfs search 'how long do we have to pay Acme invoices' --limit 3"
	@$(VENV)/bin/semfs search 'how long do we have to pay Acme invoices' --limit 3

lint: setup
	$(VENV)/bin/ruff check shared tests bench functions
	$(VENV)/bin/ruff format --check shared tests bench functions
	$(VENV)/bin/lint-imports

typecheck: setup
	$(VENV)/bin/mypy

test: setup lint typecheck
	$(VENV)/bin/pytest -n 2 --dist loadfile -q

unit: setup
	$(VENV)/bin/pytest -q -m "unit"

bench: bench-scifact bench-latency bench-ingest bench-ocr

bench-scifact: setup
	$(VENV)/bin/semfs eval ../shared/bench/scifact --mode all

bench-latency: setup
	$(PY) bench/search_latency.py

bench-ocr: setup
	$(PY) bench/ocr_bench.py

bench-burst: setup  # 1,000 uploads through the admission gate under moto, an LLM answering 429 to 30 %
	SEMFS_BURST_FILES=1000 SEMFS_BURST_BOUND=20 $(VENV)/bin/pytest -q -s -p no:cacheprovider \
	  tests/integration/test_aws_admission.py -k burst 2>/dev/null | grep '^{"files"'

bench-ingest: setup
	$(PY) bench/ingest_throughput.py

# AWS: build, deploy, then the steps CloudFormation cannot do (activate the SES rule set). STACK=name
STACK ?= semfs
deploy:
	sam build && sam deploy --stack-name $(STACK)
	scripts/post-deploy.sh $(STACK)

clean:
	rm -rf $(VENV) .semfs .pytest_cache .mypy_cache .ruff_cache
