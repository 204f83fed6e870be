# `make test`: set up a fresh Debian/Ubuntu machine (idempotent, quick when done), then run the README's test command.
# `make book`: execute every notebook (tools/book.py: what nbdev_test would run) and render the book (MkDocs) to _site/; the test
# command's session runs it too, in the background, while the other tests run, and then opens the site in Chromium.
# `make slow`: the dev tests against llama.cpp on the real Gemma 3 270M (the first run builds llama-cpp-python and
# llama-server, for bench/serve.py: minutes).
APT_PKGS := gcc g++ clang lld llvm qemu-user pocl-opencl-icd ocl-icd-libopencl1 mesa-vulkan-drivers libvulkan1 chromium chromium-driver
TEST_CMD := FILL_NAN=1 .venv/bin/pytest -q tests/
VOCAB := .cache/llama-vocab
LLAMA_SERVER := .cache/llama-server/build/bin/llama-server

.PHONY: test book sysdeps slow
test: sysdeps .venv/.installed $(VOCAB)/.done
	$(TEST_CMD)

slow: sysdeps .venv/.installed .venv/.llama_cpp $(LLAMA_SERVER)
	.venv/bin/nbdev_test --flags model --path nbs/09b_model.ipynb && .venv/bin/pytest -q -m slow tests/

book: sysdeps .venv/.installed $(VOCAB)/.done
	.venv/bin/python tools/book.py

# apt packages the backends need: installed when root, otherwise listed
sysdeps:
	@missing=$$(for p in $(APT_PKGS); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q 'ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then true; \
	elif [ "$$(id -u)" = 0 ]; then apt-get update -q && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $$missing; \
	else echo "missing apt packages (run 'sudo make sysdeps' to install):" $$missing; fi

.venv/bin/python:
	python3 -m venv .venv

# llama.cpp's tokenizer test vocabularies (09a's oracle), from the llama-cpp-python sdist on PyPI: fetched once
$(VOCAB)/.done: tools/vocab.py | .venv/bin/python
	.venv/bin/python tools/vocab.py $(VOCAB)

# the stamp re-runs pip only when the package metadata changes
.venv/.installed: setup.py settings.ini pyproject.toml | .venv/bin/python
	.venv/bin/pip install -q -e ".[dev]"
	touch $@

# llama.cpp from source without -march=native: on a CPU with AMX its native build crashes on quantized weights (environment.md)
LLAMA_CMAKE := $(if $(filter x86_64,$(shell uname -m)),-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON,-DGGML_NATIVE=OFF)
.venv/.llama_cpp: | .venv/.installed
	CMAKE_ARGS="$(LLAMA_CMAKE)" CMAKE_BUILD_PARALLEL_LEVEL=2 .venv/bin/pip install -q --no-cache-dir "llama-cpp-python==0.3.36"
	.venv/bin/pip install -q -e ".[model]"
	touch $@

# llama.cpp's llama-server (bench/serve.py's peer), from the llama.cpp source in the same llama-cpp-python sdist
$(LLAMA_SERVER): | .venv/.installed
	mkdir -p .cache/llama-server && .venv/bin/pip install -q cmake
	.venv/bin/pip download -q --no-deps --no-binary :all: "llama-cpp-python==0.3.36" -d .cache/llama-server
	tar xzf .cache/llama-server/llama_cpp_python-0.3.36.tar.gz -C .cache/llama-server
	.venv/bin/cmake -S .cache/llama-server/llama_cpp_python-0.3.36/vendor/llama.cpp -B .cache/llama-server/build \
	  -DCMAKE_BUILD_TYPE=Release $(LLAMA_CMAKE) -DLLAMA_CURL=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
	.venv/bin/cmake --build .cache/llama-server/build --target llama-server -j2
