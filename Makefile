# MotionServer — `make run` starts the service, `make test` runs every test.
# Both install what is missing first (libmicrohttpd-dev via apt; Python API tools in .venv).

HOST ?= 127.0.0.1
# Seconds per fuzz target for `make fuzz` (five targets).
FUZZ_SECONDS ?= 300
PORT ?= 8080
SWIFT ?= swift
VENV := .venv
PYTHON := $(VENV)/bin/python
CHECKOV_VENV := .venv-checkov

.PHONY: run test deps deps-python build release test-swift test-api lint-docker bench clean \
	stress stress-short fuzz-build fuzz fuzz-short test-sanitize test-browser deps-test bench-instructions test-docs \
	image-test test-k8s test-replicas

## Start the service on $(HOST):$(PORT) from a release build.
run: release
	.build/release/motion-server --host $(HOST) --port $(PORT)

## Every test: Dockerfile lint, Kubernetes manifests, the OpenAPI contract check against a
## live server, three replicas behind nginx, the browser tests (headless Chromium), the Swift
## suites, every documented example against a live server, then the short abuse suite.
test: deps-test deps-python
	$(SWIFT) build --build-tests
	$(MAKE) --no-print-directory lint-docker test-k8s test-api test-replicas test-browser
	$(SWIFT) test --skip-build --disable-swift-testing
	$(MAKE) --no-print-directory test-docs
	$(MAKE) --no-print-directory stress-short
	@if [ "$(CI)" = true ]; then $(MAKE) --no-print-directory fuzz-short; fi

## The abuse suite at full size against the release binary (about 15 minutes).
stress: release
	scripts/stress.py --binary .build/release/motion-server --json .build/stress-results.json

## The abuse suite at CI size against the debug binary (about 2 minutes).
stress-short:
	scripts/stress.py --binary .build/debug/motion-server --short

deps:
	@scripts/install-deps.sh

## What the tests need besides the build's packages (Chromium).
deps-test:
	@scripts/install-deps.sh --test

# A stamp file, not .venv/bin/python: that is a symlink, and make would compare (and touch)
# the interpreter it points to.
deps-python: $(VENV)/.installed
$(VENV)/.installed: scripts/requirements-dev.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r scripts/requirements-dev.txt
	touch $@

build: deps
	$(SWIFT) build

## The release binary, with the Swift runtime linked statically (as in the Dockerfile).
release: deps
	$(SWIFT) build -c release --static-swift-stdlib --product motion-server

test-swift: deps
	$(SWIFT) test --disable-swift-testing

## schemathesis against a live debug server, using openapi.yaml.
test-api: deps-python
	scripts/api-check.sh .build/debug/motion-server

## Tests/browser: exports, easings and the page checked in headless Chromium (Playwright),
## against the debug server. Screenshots go to .build/test-output/browser/.
test-browser: deps-test deps-python
	$(PYTHON) -m pytest -q Tests/browser
## Every curl example of README.md and docs/*.md run against a live debug server, its output
## compared with the answer shown (docs/README.md, "Examples"). README.md alone is what a
## newcomer runs first: `scripts/check-examples.py README.md`.
test-docs:
	scripts/check-examples.py --binary .build/debug/motion-server

lint-docker: deps-python
	$(VENV)/bin/hadolint Dockerfile

## deploy/kubernetes validated offline: kubernetes-validate (schemas) and checkov (about 20 s).
test-k8s: deps-python $(CHECKOV_VENV)/bin/checkov
	scripts/k8s-check.sh $(VENV)/bin/kubernetes-validate $(CHECKOV_VENV)/bin/checkov

$(CHECKOV_VENV)/bin/checkov: scripts/requirements-checkov.txt
	python3 -m venv $(CHECKOV_VENV)
	$(CHECKOV_VENV)/bin/pip install --quiet --disable-pip-version-check -r scripts/requirements-checkov.txt
	touch $@

## Three debug replicas behind a real nginx with deploy/nginx: sessions stay on one replica,
## timelines spread (a few seconds; installs nginx-light when missing).
test-replicas: build
	scripts/replicas-test.py --binary .build/debug/motion-server

## Build the image around the release binary with buildah, run it with podman and check it
## from outside (root; about 1 minute once the base image is cached, 4 the first time).
image-test: release
	scripts/image-test.sh .build/release/motion-server

bench: release
	Benchmarks/run.sh

## Instructions per request (callgrind), beside a minimal libmicrohttpd server and nginx:
## figures that do not move with machine noise (Benchmarks/scripts/instructions.py).
bench-instructions: release
	Benchmarks/scripts/install-tools.sh
	@mkdir -p Benchmarks/out/bin
	gcc -O2 -Wall -o Benchmarks/out/bin/mhd_minimal Benchmarks/c/mhd_minimal.c -lmicrohttpd -lpthread
	python3 Benchmarks/scripts/instructions.py --server .build/release/motion-server \
	  --minimal Benchmarks/out/bin/mhd_minimal --out Benchmarks/out

## libFuzzer targets (Fuzz/, docs/fuzzing.md), built with ASan into .build-fuzz.
fuzz-build: deps
	Fuzz/build.sh

## Each fuzz target for FUZZ_SECONDS (default 300) on its corpus; any crash fails.
fuzz: fuzz-build
	FUZZ_SECONDS=$(FUZZ_SECONDS) Fuzz/run.sh

## Each fuzz target for 12 s (one minute in all): part of `make test` when CI=true.
fuzz-short: fuzz-build
	FUZZ_SECONDS=12 Fuzz/run.sh

## The Swift suites under AddressSanitizer and ThreadSanitizer (.build-asan, .build-tsan).
test-sanitize: deps
	scripts/test-sanitize.sh

clean:
	rm -rf .build .build-fuzz .build-asan .build-tsan $(VENV) $(CHECKOV_VENV)
