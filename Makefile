# screenpub — the two commands of the README are `make demo` and `make test`.
SWIFT ?= swift

.PHONY: deps build release demo test bench clean

deps:
	scripts/install-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

# Record the screen (a virtual one when there is no $$DISPLAY) to out/share.webm.
demo:
	scripts/demo.sh

# The whole test suite: real Xvfb, real libvpx/libyuv, real libavformat, ffprobe, relays and headless Chromium.
# Serial: the tests start X servers, browsers and relays of their own, and a parallel run of them on a small
# machine has been seen to finish all tests and then not exit (cause not found yet); serial takes ~80 s.
test: deps
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build --no-parallel

# screenpub and ffmpeg x11grab on the same Xvfb content (table with ratios), allocations per frame, then
# latency and fan-out through screenrelay.
bench: deps
	Benchmarks/run.sh
	Benchmarks/allocations.sh
	Benchmarks/relay.sh

clean:
	rm -rf .build out
